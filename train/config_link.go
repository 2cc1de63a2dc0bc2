package train

// Link prediction's decoders, negative distributions and exclusions
// (LinkConfig).
const (
	DecoderDot     = "dot" // score = <e_u, e_v>
	DecoderMLP     = "mlp" // score = MLP(e_u ⊙ e_v): Linear, ReLU, Linear
	DistUniform    = "uniform"
	DistDegree     = "degree"
	ExcludeNone    = "none"    // DGL's default: the batch's edges stay in its neighbourhoods
	ExcludeSelf    = "self"    // the batch's edges leave them
	ExcludeReverse = "reverse" // the batch's edges and their reverses leave them
)

// LinkConfig is link prediction's part of a Config (Task TaskLink): a step
// takes Config.Batch positive training edges, draws Negatives negatives for
// each, embeds every end with the model (whose output width is Embed) and
// scores the pairs with the decoder.
type LinkConfig struct {
	Embed        int    `json:"embed,omitempty"`         // embedding width, the model's output; 0: Config.Hidden
	Negatives    int    `json:"negatives"`               // negatives per positive edge
	NegativeDist string `json:"negative_dist"`           // DistUniform or DistDegree
	Decoder      string `json:"decoder"`                 // DecoderDot or DecoderMLP
	DecoderWidth int    `json:"decoder_width,omitempty"` // the MLP decoder's hidden width; 0: Embed
	Exclude      string `json:"exclude"`                 // ExcludeReverse, ExcludeSelf or ExcludeNone
	// EvalNegatives, when above 0, ranks every held-out edge (u, v)
	// against that many negatives (u, w) drawn at evaluation time instead
	// of the dataset's stored ones: ogbl-citation2's protocol of 1,000
	// random destinations per positive, at a scale where storing them
	// would not fit.
	EvalNegatives int `json:"eval_negatives,omitempty"`
	// EvalEdges, when above 0, scores only the first EvalEdges edges of
	// each held-out set (the split shuffled them, so they are a uniform
	// sample); 0 scores all.
	EvalEdges int `json:"eval_edges,omitempty"`
}

// LinkDefaults are link prediction's defaults: one uniform negative per
// positive, the dot decoder, and the batch's edges and their reverses
// taken out of its neighbourhoods.
func LinkDefaults() LinkConfig {
	return LinkConfig{Negatives: 1, NegativeDist: DistUniform, Decoder: DecoderDot, Exclude: ExcludeReverse}
}

// EmbedWidth is the embedding width of a link run of hidden width hidden.
func (l LinkConfig) EmbedWidth(hidden int) int {
	if l.Embed > 0 {
		return l.Embed
	}
	return hidden
}

// MLPWidth is the MLP decoder's hidden width for embeddings of width embed.
func (l LinkConfig) MLPWidth(embed int) int {
	if l.DecoderWidth > 0 {
		return l.DecoderWidth
	}
	return embed
}
