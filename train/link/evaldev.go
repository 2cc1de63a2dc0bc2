package link

import (
	"context"
	"fmt"
	"slices"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// evalChunkBytes bounds the pair products (and the MLP decoder's hidden
// rows) of one chunk of an evaluation on the backend (head.evalChunk).
const evalChunkBytes = 128 << 20

// deviceSet is a held-out set laid out on the backend for scoring: chunks
// of up to per positives, each chunk's ends as backend.Link lays out a
// step of per-positive negatives (NegOwn), the rows being vertex ids into
// every vertex's embeddings. Its buffers live for one evaluation.
type deviceSet struct {
	h              *head
	pos            int // positives
	per, chunks, k int
	ends           backend.Buffer // I32 [chunks·per·(2+k)]
	counts         backend.Buffer // I32 [2·chunks+1]: each chunk's positives, its pairs, then all positives
	scores         backend.Buffer // F32 [chunks·per·(1+k)]: every chunk's pair scores
	prod, z1       backend.Buffer // F32 [per·(1+k), dim], [per·(1+k), width]: a chunk's products, the MLP's rows
	ranks          backend.Buffer // I32 [2·chunks·per]: PairRanks's, in positive order
	posAt          backend.Buffer // I32 [pos]: each positive's score's position in scores
	posScores      backend.Buffer // F32 [pos]
	owned          []backend.Buffer
}

// scoreDevice computes a held-out set's metrics from every vertex's
// embedding in backend memory (table, F32 [N, dim]): the decoder scores
// each chunk's pairs there, PairRanks ranks each positive among its own
// negatives, and, once the positives' scores are read back and made
// levels, LevelCounts places every negative among them. Only scores and
// counts come back to the host.
func (h *head) scoreDevice(ctx context.Context, table backend.Buffer, set train.Split) (Metrics, error) {
	ho, err := h.evalSet(set)
	if err != nil {
		return Metrics{}, err
	}
	d, err := h.newDeviceSet(ho)
	defer d.free()
	if err != nil {
		return Metrics{}, err
	}
	err = d.score(ctx, table)
	var m Metrics
	if err == nil {
		m, err = d.metrics(ctx)
	}
	if err != nil {
		return m, fmt.Errorf("link: the %s set: %w", set, err)
	}
	return m, nil
}

// newDeviceSet lays ho out in chunks and gives it its buffers.
func (h *head) newDeviceSet(ho heldOut) (*deviceSet, error) {
	p, k := dataset.Pairs(ho.pos), ho.k
	width := h.dec.hiddenWidth()
	per := min(p, max(1, h.evalChunk/(4*(1+k)*(h.dim+width))))
	d := &deviceSet{h: h, pos: p, per: per, chunks: (p + per - 1) / per, k: k}
	ends, counts, posAt, err := d.layout(ho)
	if err != nil {
		return d, err
	}
	pairs := d.chunks * per * (1 + k)
	for _, a := range []struct {
		dst  *backend.Buffer
		data any
	}{{&d.ends, ends}, {&d.counts, counts}, {&d.posAt, posAt}} {
		if *a.dst, err = h.be.Upload(a.data); err != nil {
			return d, err
		}
		d.owned = append(d.owned, *a.dst)
	}
	for _, a := range []struct {
		dst *backend.Buffer
		dt  backend.DType
		n   int
	}{
		{&d.scores, backend.F32, pairs}, {&d.prod, backend.F32, per * (1 + k) * h.dim},
		{&d.ranks, backend.I32, 2 * d.chunks * per}, {&d.posScores, backend.F32, p},
		{&d.z1, backend.F32, per * (1 + k) * width},
	} {
		if a.n == 0 {
			continue // z1 of the dot decoder
		}
		if *a.dst, err = h.be.Alloc(a.dt, a.n); err != nil {
			return d, err
		}
		d.owned = append(d.owned, *a.dst)
	}
	return d, nil
}

// layout is the chunks' ends (chunk c of b positives at c·per·(2+k): their
// sources, destinations, then positive i's negatives' destinations at
// 2b + i·k + j), their counts and the positives' places among the scores.
// A negative must have its positive's source (dataset.Link's rule, and
// that of the negatives drawn at evaluation).
func (d *deviceSet) layout(ho heldOut) (ends, counts, posAt []int32, err error) {
	k, per := d.k, d.per
	ends = make([]int32, d.chunks*per*(2+k))
	counts = make([]int32, 2*d.chunks+1)
	posAt = make([]int32, d.pos)
	for c := range d.chunks {
		lo := c * per
		b := min(d.pos, lo+per) - lo
		counts[c], counts[d.chunks+c] = int32(b), int32(b*(1+k))
		e := ends[c*per*(2+k):]
		for i := range b {
			q := lo + i
			posAt[q] = int32(c*per*(1+k) + i)
			e[i], e[b+i] = ho.pos[2*q], ho.pos[2*q+1]
			for j := range k {
				n := ho.neg[2*(q*k+j):]
				if n[0] != e[i] {
					return nil, nil, nil, fmt.Errorf("link: negative %d has source %d, but its positive %d has source %d", q*k+j, n[0], q, e[i])
				}
				e[2*b+i*k+j] = n[1]
			}
		}
	}
	counts[2*d.chunks] = int32(d.pos)
	return ends, counts, posAt, nil
}

// chunk is chunk c's counts (its positives, its pairs) and its views of
// ends and scores.
func (d *deviceSet) chunk(c int) (n, pairs backend.Count, ends, scores backend.Buffer) {
	be, k, per := d.h.be, d.k, d.per
	n = backend.Count{Buf: d.counts, Off: c, Cap: per}
	pairs = backend.Count{Buf: d.counts, Off: d.chunks + c, Cap: per * (1 + k)}
	return n, pairs, be.View(d.ends, c*per*(2+k), per*(2+k)), be.View(d.scores, c*per*(1+k), per*(1+k))
}

// score scores every chunk's pairs and ranks its positives among their
// own negatives, looking at ctx between chunks.
func (d *deviceSet) score(ctx context.Context, table backend.Buffer) error {
	h := d.h
	for c := range d.chunks {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, pairs, ends, scores := d.chunk(c)
		h.lk.PairProduct(table, h.dim, n, d.k, backend.NegOwn, ends, d.prod)
		h.dec.forward(d.prod, pairs, scores, d.z1)
		h.lk.PairRanks(scores, n, d.k, h.be.View(d.ranks, 2*c*d.per, 2*d.per))
	}
	return nil
}

// metrics reads the positives' scores and ranks back, counts every
// negative at the positives' levels and gives the metrics.
func (d *deviceSet) metrics(ctx context.Context) (Metrics, error) {
	be := d.h.be
	be.Gather(d.scores, 1, d.posAt, backend.Count{Buf: d.counts, Off: 2 * d.chunks, Cap: d.pos}, d.posScores)
	pos, own := make([]float32, d.pos), make([]int32, 2*d.pos)
	be.Read(pos, d.posScores, 0)
	be.Read(own, d.ranks, 0)
	if err := be.Sync(); err != nil {
		return Metrics{}, err
	}
	levels, at := positiveLevels(pos)
	counts, err := d.levelCounts(ctx, levels)
	if err != nil {
		return Metrics{}, err
	}
	m := len(levels)
	if err := notFinite(countNotFinite(pos)+int(counts[2*m+1]), d.pos*(1+d.k)); err != nil {
		return Metrics{}, err
	}
	r := rankStats{own: own, nPos: d.pos, levels: make([]level, m)}
	above := int(counts[2*m]) // the negatives above level j, from the top down
	for j := m - 1; j >= 0; j-- {
		r.levels[m-1-j] = level{pos: at[j], above: above, tied: int(counts[2*j+1])}
		above += int(counts[2*j]) + int(counts[2*j+1])
	}
	r.nNeg = above
	return r.metrics(), nil
}

// levelCounts runs LevelCounts over every chunk's negatives against the
// levels (a level 0 where there are none: every positive's score is not
// finite) and reads the counts back.
func (d *deviceSet) levelCounts(ctx context.Context, levels []float32) ([]int32, error) {
	be := d.h.be
	lv := levels
	if len(lv) == 0 {
		lv = []float32{0}
	}
	lb, err := be.Upload(slices.Clone(lv))
	if err != nil {
		return nil, err
	}
	defer be.Free(lb)
	cb, err := be.Alloc(backend.I32, 2*len(lv)+2)
	if err != nil {
		return nil, err
	}
	defer be.Free(cb)
	for c := range d.chunks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, _, _, scores := d.chunk(c)
		d.h.lk.LevelCounts(lb, len(lv), scores, n, d.k, cb)
	}
	counts := make([]int32, 2*len(lv)+2)
	be.Read(counts, cb, 0)
	if err := be.Sync(); err != nil {
		return nil, err
	}
	if len(levels) == 0 { // the stand-in level's counts are the finite negatives'
		counts = []int32{counts[0] + counts[1] + counts[2], counts[3]}
	}
	return counts, nil
}

// positiveLevels are the distinct finite scores of pos, ascending, and how
// many positives score each.
func positiveLevels(pos []float32) (levels []float32, at []int) {
	s := make([]float32, 0, len(pos))
	for _, v := range pos {
		if finite(float64(v)) {
			s = append(s, v)
		}
	}
	slices.Sort(s)
	for i, v := range s {
		if i > 0 && v == s[i-1] {
			at[len(at)-1]++
			continue
		}
		levels, at = append(levels, v), append(at, 1)
	}
	return levels, at
}

func (d *deviceSet) free() {
	for _, b := range d.owned {
		d.h.be.Free(b)
	}
	d.owned = nil
}
