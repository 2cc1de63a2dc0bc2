package cuda

import "fmt"

// kernelError describes an error record written by a kernel.
func kernelError(code, a, bb, cc int32) error {
	switch code {
	case 1:
		return fmt.Errorf("cuda: SampleLayer: dst[%d] = %d outside the graph", a, bb)
	case 2:
		return fmt.Errorf("cuda: Relabel: vertex id %d at position %d outside the graph", bb, a)
	case 3:
		return fmt.Errorf("cuda: Gather: ids[%d] = %d outside table of %d rows", a, bb, cc)
	case 4:
		return fmt.Errorf("cuda: SoftmaxCrossEntropy: labels[%d] = %d, want < %d classes", a, bb, cc)
	case 5:
		return fmt.Errorf("cuda: Adam: step t = %d, want >= 1", a)
	case 6:
		return fmt.Errorf("cuda: ReplaceRows: row %d: vertex %d has no hot row inside the table (slot table or table of %d rows)", a, bb, cc)
	case 7:
		return fmt.Errorf("cuda: AggregateConcatTable: blk.SrcIDs[%d] = %d outside table of %d rows", a, bb, cc)
	case 20:
		return fmt.Errorf("cuda: EdgeSeeds: ids[%d] = %d outside the %d pairs", a, bb, cc)
	case 21:
		return fmt.Errorf("cuda: GroupRows: rows[%d] = %d outside [0, %d)", a, bb, cc)
	case 22:
		return fmt.Errorf("cuda: AllReduceSum: rank %d waited 120 s for rank %d (round word %d): the peer stopped or issued other collectives", cc, a, bb)
	}
	return fmt.Errorf("cuda: kernel error %d (%d, %d, %d)", code, a, bb, cc)
}
