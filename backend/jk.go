package backend

// JumpingKnowledge holds the ops of jumping knowledge's element-wise
// maximum over the outputs of a model's layers (Xu et al. 2018; PyTorch
// Geometric's JumpingKnowledge("max")): out[i, j] = max over layers k of
// x_k[i, j], and its gradient routed to the layer that gave the maximum.
// The other modes (the last layer's output, the outputs concatenated)
// need only products.
//
// JumpingKnowledge is a capability: only models with jumping knowledge's
// maximum use it, and nn.NewModel checks it (JumpingKnowledgeOf).
type JumpingKnowledge interface {
	// LayerMax folds layer k's output x (F32 [n.Cap, dim]) into the
	// running maximum y (F32 [n.Cap, dim]) on rows [:n]: with first set
	// y = x and arg = k everywhere; otherwise where x > y (strictly, so
	// the lowest layer wins ties), y = x and arg = k. arg is I32 [n.Cap,
	// dim].
	LayerMax(x Buffer, n Count, dim, k int, first bool, y, arg Buffer)
	// LayerMaxBackward writes layer k's share of the maximum's gradient
	// dy (F32 [n.Cap, dim]) on rows [:n]: dx[i, j] = dy[i, j] where
	// arg[i, j] = k, else 0, added to dx when accumulate is set (dx F32
	// [n.Cap, dim]; rows past n are left alone).
	LayerMaxBackward(dy, arg Buffer, n Count, dim, k int, accumulate bool, dx Buffer)
}

// JumpingKnowledgeOf is be's JumpingKnowledge (be itself, or the wrapper
// around a backend that has it), or an error naming be and the capability.
func JumpingKnowledgeOf(be Backend) (JumpingKnowledge, error) {
	return need[JumpingKnowledge](be, "the jumping knowledge ops (backend.JumpingKnowledge)")
}
