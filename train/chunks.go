package train

import (
	"math"

	"github.com/fanout-gnn/fanout/backend"
)

// Chunks. A feature store that fetches rows from its group's ranks through
// all-to-alls (featstore.Exchanged) sends every peer a chunk of a fixed
// number of rows per gather. Left alone, a chunk holds the gather's
// capacity and never overflows. The replay driver sizes it as it sizes its
// envelope: the most rows any of the observed batches asks of one peer
// (counted on the host from their bottom sources, after the batch before
// them, whose rows reuse keeps) times the margin, agreed by maximum over
// the group; a gather that asks more sets the overflow flag, which the
// step's reduction spreads to every rank, so no rank applies the step; the
// driver grows the chunks (to the most any gather asked since the last
// capture, agreed over the group, times the margin), re-captures and
// re-runs the step. Evaluation reads each batch's need back and gathers
// again after growing.

// chunkedFeatures is a feature store whose gathers move rows through
// chunks the driver sizes (featstore.Exchanged).
type chunkedFeatures interface {
	Chunk() int
	SizeChunks(rows int) error
	FlagOverflow(clock, flag backend.Buffer)
	Need(clear bool) (last, most int, err error)
	Asks(ids, prev []int32) int
}

// chunked is the trainer's chunked feature store, or nil.
func (t *Trainer) chunked() chunkedFeatures {
	if t.in == nil {
		return nil
	}
	c, _ := t.in.Feat.(chunkedFeatures)
	return c
}

// chunkRows is the chunks' rows (0 without a chunked store).
func (t *Trainer) chunkRows() int {
	if c := t.chunked(); c != nil {
		return c.Chunk()
	}
	return 0
}

// batchSources reads back the live bottom sources of the batch sampled on
// p, whose counts were read into counts.
func (t *Trainer) batchSources(p *Plan, counts []int32) ([]int32, error) {
	b := p.Blocks[0]
	ids := make([]int32, min(int(counts[b.NumSrc.Off]), b.NumSrc.Cap))
	if len(ids) > 0 {
		t.be.Read(ids, b.SrcIDs, 0)
	}
	return ids, t.be.Sync()
}

// sizeChunks sets the chunks for need rows asked of one peer (this rank's
// observation), agreed over the group, times the margin; or to fixed rows
// when fixed > 0.
func (t *Trainer) sizeChunks(need, fixed int) error {
	c := t.chunked()
	if c == nil {
		return nil
	}
	if fixed > 0 {
		return c.SizeChunks(fixed)
	}
	agreed, err := t.maxHost([]int32{int32(need)})
	if err != nil {
		return err
	}
	return c.SizeChunks(int(math.Ceil(float64(agreed[0]) * t.margin())))
}

// growChunks raises the chunks, on every rank alike, to the most rows a
// gather asked of one peer since the last clear (or last, with useLast:
// the last gather's), times the margin, when that is above them, and
// clears the most. It says whether they grew.
func (t *Trainer) growChunks(useLast bool) (bool, error) {
	c := t.chunked()
	if c == nil {
		return false, nil
	}
	last, most, err := c.Need(true)
	if err != nil {
		return false, err
	}
	if useLast {
		most = last
	}
	agreed, err := t.maxHost([]int32{int32(most)})
	if err != nil {
		return false, err
	}
	if int(agreed[0]) <= c.Chunk() {
		return false, nil
	}
	return true, c.SizeChunks(max(c.Chunk()+1, int(math.Ceil(float64(agreed[0])*t.margin()))))
}

// gatherFits is for an eager gather on p (training or evaluation): when the chunks are below its
// capacity it reads back what the gather asked of one peer (every rank,
// agreeing), and while any rank asked more than a chunk holds it grows the
// chunks and gathers again.
func (t *Trainer) gatherFits(p *Plan) error {
	c := t.chunked()
	for c != nil && c.Chunk() < p.Blocks[0].NumSrc.Cap {
		grew, err := t.growChunks(true)
		if err != nil || !grew {
			return err
		}
		p.Gather(t.in)
	}
	return nil
}

// startChunks gives an eager run's chunked store its first, small chunks
// (before its first gather, which would size them to the gather's
// capacity): gatherFits then grows them, on every rank alike, to what the
// gathers ask times the margin, gathering again when one asked more.
func (t *Trainer) startChunks() error {
	if c := t.chunked(); c != nil && c.Chunk() == 0 {
		return c.SizeChunks(1)
	}
	return nil
}

// flagChunks issues, after a captured gather, the check that it fit its
// chunks, setting flag.
func (t *Trainer) flagChunks(p *Plan, flag backend.Buffer) {
	if c := t.chunked(); c != nil {
		c.FlagOverflow(p.Clock, flag)
	}
}
