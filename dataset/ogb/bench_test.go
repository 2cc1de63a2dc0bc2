package ogb

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// writeSynthetic writes a gzip CSV raw folder of n vertices with dim
// float32 features (printed as float64, as pandas writes them) and e edges.
func writeSynthetic(b *testing.B, dir string, n, dim, e int) int64 {
	b.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	var total int64
	write := func(name string, fill func(w *bufio.Writer)) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
		w := bufio.NewWriter(zw)
		fill(w)
		w.Flush()
		zw.Close()
		st, _ := f.Stat()
		total += st.Size()
		f.Close()
	}
	write("raw/num-node-list.csv.gz", func(w *bufio.Writer) { fmt.Fprintln(w, n) })
	write("raw/num-edge-list.csv.gz", func(w *bufio.Writer) { fmt.Fprintln(w, e) })
	write("raw/edge.csv.gz", func(w *bufio.Writer) {
		for range e {
			fmt.Fprintf(w, "%d,%d\n", rng.IntN(n), rng.IntN(n))
		}
	})
	write("raw/node-feat.csv.gz", func(w *bufio.Writer) {
		var buf []byte
		for range n {
			buf = buf[:0]
			for j := range dim {
				if j > 0 {
					buf = append(buf, ',')
				}
				buf = strconv.AppendFloat(buf, float64(float32(rng.NormFloat64())), 'g', -1, 64)
			}
			w.Write(append(buf, '\n'))
		}
	})
	write("raw/node-label.csv.gz", func(w *bufio.Writer) {
		for range n {
			fmt.Fprintln(w, rng.IntN(47))
		}
	})
	for _, part := range []string{"train", "valid", "test"} {
		write("split/sales_ranking/"+part+".csv.gz", func(w *bufio.Writer) {
			for v := range n / 10 {
				fmt.Fprintln(w, v)
			}
		})
	}
	return total
}

// BenchmarkImportCSV imports a synthetic products-like folder: 100,000
// vertices with 100 features and 2,000,000 edges (add_inverse_edge).
func BenchmarkImportCSV(b *testing.B) {
	dir := b.TempDir()
	size := writeSynthetic(b, dir, 100000, 100, 2000000)
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Import(dir, Options{Symmetrize: true}); err != nil {
			b.Fatal(err)
		}
	}
}
