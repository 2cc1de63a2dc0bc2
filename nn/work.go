package nn

// Work is what layer l's forward pass does for a block of the given live
// sizes, for the step's floor (train.StepFloor): the FLOPs of its matrix
// products, and the width of the rows its aggregation reads per edge.
type Work struct {
	FLOP     float64
	AggWidth int
}

// LayerWork counts layer l's forward work for dst destinations and src
// sources. SAGE multiplies [x_i | mean] by [W_self; W_neigh]; GCN (taken as
// aggregating first) and GIN's first MLP layer multiply the aggregation by
// W, GIN's second multiplies by W2; GAT projects every source by W (heads
// times per-head width columns) and aggregates the projected rows, or in
// its aggregate-first bottom layer (gat_first.go) scores the sources'
// input rows, aggregates them per head and projects the destinations'
// aggregates by each head's columns of W.
func (c Config) LayerWork(l int, dst, src float64) Work {
	in, out := c.dims(l)
	fi, fo := float64(in), float64(out)
	switch c.Kind {
	case KindGCN:
		return Work{FLOP: 2 * dst * fi * fo, AggWidth: in}
	case KindGIN:
		return Work{FLOP: 2 * dst * (fi*fo + fo*fo), AggWidth: in}
	case KindGAT:
		if c.aggregatesFirst(l, in) {
			// each head's [in, out/heads] product at the destinations
			return Work{FLOP: 2*dst*fi*fo + 2*(src+dst)*fi*float64(c.Heads), AggWidth: in}
		}
		width := out
		if !c.hiddenOut(l) {
			width = c.OutHeads * out // every head maps to the classes
		}
		return Work{FLOP: 2 * src * fi * float64(width), AggWidth: width}
	}
	return Work{FLOP: 2 * dst * 2 * fi * fo, AggWidth: in}
}
