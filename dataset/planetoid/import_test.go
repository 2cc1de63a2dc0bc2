package planetoid

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"fmt"
	"github.com/fanout-gnn/fanout/internal/quote"
)

const tinyRows = 504 // rows of allx: 2 training + 500 validation + 2 more

// tinyAllx is row i of allx: (i%5, i%2, 0.5).
func tinyAllx() [][]float32 {
	rows := make([][]float32, tinyRows)
	for i := range rows {
		rows[i] = []float32{float32(i % 5), float32(i % 2), 0.5}
	}
	return rows
}

func tinyAlly() []int {
	l := make([]int, tinyRows)
	for i := range l {
		l[i] = i % 3
	}
	return l
}

var (
	tinyTestIndex = []int{507, 504, 506} // 505 is missing, as in CiteSeer
	tinyTx        = [][]float32{{100, 0, 7}, {101, 0, 7}, {102, 0, 7}}
	tinyTy        = []int{2, 0, 1}
	tinyKeys      = []int{0, 1, 2, 507, 3}
	tinyAdj       = map[int][]int{0: {1, 2}, 1: {0}, 2: {2, 505}, 507: {0, 0}}
)

// tinyFiles returns the eight files of dataset "tiny".
func tinyFiles() map[string][]byte {
	allx := tinyAllx()
	index := ""
	for _, v := range tinyTestIndex {
		index += strconv.Itoa(v) + "\n"
	}
	return map[string][]byte{
		"x":          csrPickle(allx[:2], 3),
		"y":          oneHotPickle(tinyAlly()[:2], 3),
		"allx":       csrPickle(allx, 3),
		"ally":       oneHotPickle(tinyAlly(), 3),
		"tx":         csrPickle(tinyTx, 3),
		"ty":         oneHotPickle(tinyTy, 3),
		"graph":      graphPickle(tinyKeys, tinyAdj),
		"test.index": []byte(index),
	}
}

// writeFiles writes ind.tiny.* into a new folder.
func writeFiles(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for ext, b := range files {
		if err := os.WriteFile(filepath.Join(dir, "ind.tiny."+ext), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestImportTiny(t *testing.T) {
	d, err := Import(writeFiles(t, tinyFiles()), "tiny")
	if err != nil {
		t.Fatal(err)
	}
	g := d.Graph
	if g.NumNodes != 508 || g.NumEdges() != 8 {
		t.Fatalf("%d vertices, %d edges; want 508, 8", g.NumNodes, g.NumEdges())
	}
	for v, want := range map[int64][]int32{0: {1, 2, 507}, 1: {0}, 2: {0, 505}, 505: {2}, 507: {0}, 3: {}} {
		if got := g.Neighbors32(v); !slices.Equal(got, want) {
			t.Errorf("neighbours of %d: %v, want %v", v, got, want)
		}
	}
	if d.FeatDim != 3 || d.NumClasses != 3 || d.Name != "tiny" {
		t.Errorf("dim %d, classes %d, name %q", d.FeatDim, d.NumClasses, d.Name)
	}
	row := func(v int) []float32 { return d.Features[3*v : 3*v+3] }
	if !slices.Equal(row(7), []float32{2, 1, 0.5}) || d.Labels[7] != 1 {
		t.Errorf("vertex 7: %v label %d", row(7), d.Labels[7])
	}
	// Row i of tx/ty belongs to vertex test.index[i]; 505 is a zero row
	// without label.
	for i, v := range tinyTestIndex {
		if !slices.Equal(row(v), tinyTx[i]) || d.Labels[v] != int32(tinyTy[i]) {
			t.Errorf("vertex %d: %v label %d, want %v label %d", v, row(v), d.Labels[v], tinyTx[i], tinyTy[i])
		}
	}
	if !slices.Equal(row(505), []float32{0, 0, 0}) || d.Labels[505] != -1 {
		t.Errorf("vertex 505: %v label %d, want zeros and -1", row(505), d.Labels[505])
	}
	if !slices.Equal(d.Train, []int64{0, 1}) || len(d.Valid) != 500 || d.Valid[0] != 2 || d.Valid[499] != 501 ||
		!slices.Equal(d.Test, []int64{504, 506, 507}) {
		t.Errorf("split %v, %d valid from %d, test %v", d.Train, len(d.Valid), d.Valid[0], d.Test)
	}
	if err := d.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestImportBadInput(t *testing.T) {
	allx := tinyAllx()
	notOneHot := func() []byte {
		w := newPickle()
		v := make([]int32, tinyRows*3)
		for i, l := range tinyAlly() {
			v[i*3+l] = 1
		}
		v[3*3+1], v[3*3+2] = 1, 1
		return w.ndarray([]int{tinyRows, 3}, "i4", le(v)).stop()
	}
	cases := []struct {
		name string
		edit func(f map[string][]byte)
		file string
		want string
	}{
		{"missing file", func(f map[string][]byte) { delete(f, "ty") }, "ind.tiny.ty", "no such file"},
		{"truncated pickle", func(f map[string][]byte) { f["allx"] = f["allx"][:len(f["allx"])/2] }, "ind.tiny.allx", "truncated"},
		{"not a pickle", func(f map[string][]byte) { f["x"] = []byte("<html>") }, "ind.tiny.x", "unsupported opcode"},
		{"label not one-hot", func(f map[string][]byte) { f["ally"] = notOneHot() }, "ind.tiny.ally", "label row 3 is not one-hot"},
		{"edge out of range", func(f map[string][]byte) {
			f["graph"] = graphPickle([]int{0, 2}, map[int][]int{0: {1}, 2: {9999}})
		}, "ind.tiny.graph", "edge (2, 9999) has a vertex outside [0, 508)"},
		{"graph not a dict", func(f map[string][]byte) { f["graph"] = newPickle().op(']').stop() }, "ind.tiny.graph", "want a dict of neighbour lists, have a list"},
		{"bad test index", func(f map[string][]byte) { f["test.index"] = []byte("507\nabc\n506\n") }, "ind.tiny.test.index", `line 2: "abc" is not a vertex id`},
		{"test ids do not follow allx", func(f map[string][]byte) { f["test.index"] = []byte("509\n510\n511\n") }, "ind.tiny.test.index", "smallest test id is 509, want 504"},
		{"duplicate test id", func(f map[string][]byte) { f["test.index"] = []byte("504\n504\n506\n") }, "ind.tiny.test.index", "vertex 504 is listed twice"},
		{"feature widths", func(f map[string][]byte) { f["tx"] = csrPickle(tinyTx, 4) }, "ind.tiny.allx", "feature widths differ"},
		{"test rows", func(f map[string][]byte) { f["tx"] = csrPickle(tinyTx[:2], 3) }, "ind.tiny.test.index", "3 test ids, but tx has 2 rows"},
		{"too few rows", func(f map[string][]byte) {
			f["allx"], f["ally"] = csrPickle(allx[:400], 3), oneHotPickle(tinyAlly()[:400], 3)
		}, "ind.tiny.y", "exceed the 400 rows of ally"},
		{"wrong dtype", func(f map[string][]byte) {
			f["y"] = newPickle().ndarray([]int{2, 3}, "c16", make([]byte, 96)).stop()
		}, "ind.tiny.y", `numpy dtype "c16" is not supported`},
		{"short array data", func(f map[string][]byte) {
			f["y"] = newPickle().ndarray([]int{2, 3}, "i4", make([]byte, 20)).stop()
		}, "ind.tiny.y", "holds 20 bytes, want 24"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := tinyFiles()
			c.edit(files)
			_, err := Import(writeFiles(t, files), "tiny")
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.file) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want %q naming %s", err, c.want, c.file)
			}
		})
	}
}

// TestParseIndexQuotesLongLines: a bad test.index line of a megabyte is
// quoted to at most quote.Limit bytes.
func TestParseIndexQuotesLongLines(t *testing.T) {
	_, err := parseIndex([]byte("1\n2\nx" + strings.Repeat("7", 1<<20) + "\n"))
	if err == nil || len(err.Error()) > 2*quote.Limit || !strings.Contains(err.Error(), "line 3: ") {
		t.Errorf("an error of %d bytes, want line 3 quoted to %d: %.300v", len(fmt.Sprint(err)), quote.Limit, err)
	}
}
