package nn

import (
	"fmt"
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/rng"
)

// tableStream is the Philox stream of learned tables' initial values; the
// table made with index i is keyed by the seed's part i+1 (rng.Derive).
const tableStream = 192

// NewTable makes a learned embedding table [rows, dim] named name (a
// featureless vertex type's input rows): W uniform in ±sqrt(3/dim) (rows of
// about unit norm), M and V zero for Adam, and no dense gradient: a step
// trains the rows it read (backend.SparseAdam on the batch's rows and their
// gradient). Element (r, c) is word (r, c) of the key (Derive(seed,
// index+1), step 0, stream tableStream). The caller frees it with FreeTable.
func NewTable(be backend.Backend, name string, rows, dim int, seed uint64, index int) (*Param, error) {
	if rows <= 0 || dim <= 0 {
		return nil, fmt.Errorf("nn: table %s: %d rows of width %d", name, rows, dim)
	}
	p := &Param{Name: name, Shape: []int{rows, dim}}
	for _, dst := range []*backend.Buffer{&p.W, &p.M, &p.V} {
		b, err := be.Alloc(backend.F32, rows*dim)
		if err != nil {
			p.free(be)
			return nil, fmt.Errorf("nn: allocating table %s [%d, %d]: %w", name, rows, dim, err)
		}
		*dst = b
		p.owns = append(p.owns, b)
	}
	be.Fill(p.M, 0)
	be.Fill(p.V, 0)
	a := float32(math.Sqrt(3 / float64(dim)))
	key := rng.Key{Seed: rng.Derive(seed, index+1), Stream: tableStream}
	const chunk = 1 << 14 // rows written at a time
	host := make([]float32, min(rows, chunk)*dim)
	for r0 := 0; r0 < rows; r0 += chunk {
		n := min(chunk, rows-r0)
		h := host[:n*dim]
		for r := range n {
			row := h[r*dim : (r+1)*dim]
			for c0 := 0; c0 < dim; c0 += 4 {
				w := key.Words(uint32(r0+r), uint32(c0/4))
				for j := 0; j < 4 && c0+j < dim; j++ {
					row[c0+j] = rng.UniformFloat(w[j], -a, a)
				}
			}
		}
		be.Write(p.W, r0*dim, h)
	}
	return p, nil
}

// FreeTable releases a table NewTable made.
func FreeTable(be backend.Backend, p *Param) {
	if p != nil {
		p.free(be)
	}
}
