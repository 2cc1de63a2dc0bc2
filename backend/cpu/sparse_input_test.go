package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNextNonzero: nextNonzero visits exactly the elements a plain scan
// finds nonzero (v != 0: -0 is a zero, NaN and infinities are not), from
// every start, on rows of every length up to 40 with few or many nonzeros.
func TestNextNonzero(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	special := []float32{float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(-1)), 1e-45, -2}
	for n := 0; n <= 40; n++ {
		for _, share := range []float64{0.05, 0.5} {
			row := make([]float32, n)
			for k := range row {
				if r.Float64() < share {
					row[k] = special[r.IntN(len(special))]
				}
			}
			for start := 0; start <= n; start++ {
				want := n
				for k := start; k < n; k++ {
					if row[k] != 0 {
						want = k
						break
					}
				}
				if got := nextNonzero(row, start); got != want {
					t.Fatalf("row %v from %d: got %d, want %d", row, start, got, want)
				}
			}
		}
	}
}

// TestSparseRows: sparseRows lists exactly the nonzeros of a 2% x, row by
// row in column order, at 1 and 3 threads; it refuses an x narrower than
// sparseMinWidth, one whose sample is dense, and one whose sample sees only
// zeros where the rest is dense (the pass gives up).
func TestSparseRows(t *testing.T) {
	const rows, in = 300, 1433
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, rows*in)
	for k := range x {
		if r.Float64() < 0.02 {
			x[k] = float32(r.NormFloat64())
		}
	}
	for _, threads := range []int{1, 3} {
		b := New(threads)
		nz, ok := b.sparseRows(x, rows, in)
		if !ok {
			t.Fatalf("%d threads: a 2%% x taken as dense", threads)
		}
		p := 0
		for i := range rows {
			for k, v := range x[i*in : (i+1)*in] {
				if v == 0 {
					continue
				}
				if p >= int(nz.ptr[i+1]) || int(nz.col[p]) != k || nz.val[p] != v {
					t.Fatalf("%d threads: row %d, column %d: entry %d of the list is wrong", threads, i, k, p)
				}
				p++
			}
			if p != int(nz.ptr[i+1]) {
				t.Fatalf("%d threads: row %d ends at %d, want %d", threads, i, nz.ptr[i+1], p)
			}
		}
		b.Close()
	}
	b := New(2)
	defer b.Close()
	if _, ok := b.sparseRows(x[:rows*100], rows, 100); ok {
		t.Errorf("an x 100 wide taken as sparse")
	}
	dense := make([]float32, rows*in)
	for k := range dense {
		dense[k] = 1
	}
	if _, ok := b.sparseRows(dense, rows, in); ok {
		t.Errorf("a dense x taken as sparse")
	}
	step := rows * in / sparseSample
	for k := range dense {
		if k%step == 0 {
			dense[k] = 0 // what the sample reads
		}
	}
	if _, ok := b.sparseRows(dense, rows, in); ok {
		t.Errorf("a dense x whose sample reads zeros taken as sparse")
	}
}
