package sample

// Block is one sampled layer as plain index records, in CSR form by
// destination. Local source ids index SrcIDs; destination i is source i.
type Block struct {
	NumDst  int     // destinations; they are SrcIDs[:NumDst]
	Indptr  []int32 // [NumDst+1] edge offsets per destination
	Indices []int32 // [Indptr[NumDst]] local source id of each sampled edge
	SrcIDs  []int32 // [number of sources] global vertex ids, destinations first
}

// NumEdges is the number of sampled edges.
func (b *Block) NumEdges() int { return len(b.Indices) }

// NumSrc is the number of sources (destinations included).
func (b *Block) NumSrc() int { return len(b.SrcIDs) }

// MiniBatch is the sampled computation graph of one batch of seeds.
// Blocks[0] is the bottom (input) layer, whose SrcIDs are the vertices whose
// input features are gathered; Blocks[len-1] is the top layer, whose
// destinations are the seeds. The destinations of Blocks[l]
// (Blocks[l].SrcIDs[:Blocks[l].NumDst]) are the sources of Blocks[l+1]
// (Blocks[l+1].SrcIDs), in the same order.
type MiniBatch struct {
	Seeds  []int32 // [batch] global ids of the seeds, as given
	Blocks []Block // [layers] bottom first
}

// InputIDs are the global ids whose features the bottom layer reads.
func (m *MiniBatch) InputIDs() []int32 {
	if len(m.Blocks) == 0 {
		return m.Seeds
	}
	return m.Blocks[0].SrcIDs
}
