package planetoid

import (
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/internal/pickle"
)

func TestUnpickleScalarsAndContainers(t *testing.T) {
	w := newPickle()
	w.op('(')
	w.int(7).int(300).int(-5).int(70000)
	w.op(0x8a, 2, 0x00, 0x80)               // LONG1 -32768
	w.op('G', 0x3f, 0xf8, 0, 0, 0, 0, 0, 0) // BINFLOAT 1.5
	w.op('N', 0x88, 0x89)
	w.buf.WriteString("I01\nI42\nL-9L\nF2.5\n")
	w.str("abc")
	w.op(0x8c, 2, 'h', 'i')                 // SHORT_BINUNICODE
	w.op('C', 2, 1, 2)                      // SHORT_BINBYTES
	w.op('(').int(1).int(2).op('l', 'q', 5) // LIST
	w.op('}').str("k").int(1).op('s')       // SETITEM
	w.op(0x95, 0, 0, 0, 0, 0, 0, 0, 0)      // FRAME
	w.op(0x8c, 1, 'm', 0x8c, 1, 'n', 0x93)  // STACK_GLOBAL
	w.op(0x94).get(5).op('t')               // MEMOIZE, GET of the list, TUPLE
	v, err := pickle.Decode(w.stop(), pickle.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	tup, ok := v.(pickle.Tuple)
	if !ok || len(tup) != 20 {
		t.Fatalf("have %s of %d", pickle.TypeName(v), len(tup))
	}
	want := []any{int64(7), int64(300), int64(-5), int64(70000), int64(-32768), 1.5, nil, true, false,
		true, int64(42), int64(-9), 2.5, "abc", "hi", "\x01\x02"}
	for i, x := range want {
		if tup[i] != x {
			t.Errorf("item %d: %#v, want %#v", i, tup[i], x)
		}
	}
	if l, ok := tup[16].(*pickle.List); !ok || !slices.Equal(l.Items, []any{int64(1), int64(2)}) {
		t.Errorf("list: %#v", tup[16])
	}
	if d, ok := tup[17].(*pickle.Dict); !ok {
		t.Errorf("dict: %#v", tup[17])
	} else if v, _ := d.Get("k"); v != int64(1) {
		t.Errorf("dict: %#v", tup[17])
	}
	if g, ok := tup[18].(*pickle.Global); !ok || g.Module != "m" || g.Name != "n" {
		t.Errorf("global: %#v", tup[18])
	}
	if tup[16] != tup[19] {
		t.Error("GET did not return the memoized list")
	}
}

func TestUnpickleNumpyVariants(t *testing.T) {
	// Fortran order, big-endian float64 and Python 3's bytes-as-latin-1.
	w := newPickle()
	w.global("numpy.core.multiarray", "_reconstruct").global("numpy", "ndarray")
	w.int(0).op(0x85).str("b").op(0x87, 'R')
	w.op('(').int(1).int(2).int(3).op(0x86)
	w.global("numpy", "dtype").str("f8").int(0).int(1).op(0x87, 'R')
	w.op('(').int(3).str(">").op('N', 'N', 'N').int(-1).int(-1).int(0).op('t', 'b')
	w.op(0x88) // Fortran order
	raw := make([]byte, 0, 48)
	for _, x := range []float64{1, 4, 2, 5, 3, 6} { // column-major [[1 2 3] [4 5 6]]
		b := le([]float64{x})
		slices.Reverse(b)
		raw = append(raw, b...)
	}
	// _codecs.encode(u'...', 'latin1'), as Python 3 writes bytes at protocol 2.
	w.global("_codecs", "encode")
	latin := []rune{}
	for _, c := range raw {
		latin = append(latin, rune(c))
	}
	text := string(latin)
	w.op('X', byte(len(text)), byte(len(text)>>8), 0, 0)
	w.buf.WriteString(text)
	w.str("latin1").op(0x86, 'R')
	w.op('t', 'b')
	v, err := pickle.Decode(w.stop(), pickle.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := asMatrix(v, 100)
	if err != nil {
		t.Fatal(err)
	}
	if m.rows != 2 || m.cols != 3 || !slices.Equal(m.data, []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("matrix %dx%d %v", m.rows, m.cols, m.data)
	}
}

func TestCyclicValuesAreSafe(t *testing.T) {
	// A list that contains itself: decoders must fail, not recurse.
	data := []byte{0x80, 2, ']', 'q', 1, 'h', 1, 'a', '.'}
	v, err := pickle.Decode(data, pickle.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := asMatrix(v, 100); err == nil {
		t.Error("a list decoded as a matrix")
	}
	if _, _, err := asAdjacency(v); err == nil {
		t.Error("a list decoded as a graph")
	}
}

func FuzzUnpickle(f *testing.F) {
	f.Add(csrPickle([][]float32{{1, 0}, {0, 2}}, 2))
	f.Add(oneHotPickle([]int{0, 1, -1}, 2))
	f.Add(graphPickle([]int{0, 1}, map[int][]int{0: {1}, 1: {0, 1}}))
	f.Add([]byte{0x80, 2, ']', 'q', 1, 'h', 1, 'a', '.'})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := pickle.Decode(data, pickle.Hooks{})
		if err != nil {
			return
		}
		if m, err := asMatrix(v, 1<<16); err == nil && int64(len(m.data)) != m.rows*m.cols {
			t.Fatalf("%dx%d matrix with %d values", m.rows, m.cols, len(m.data))
		}
		if src, dst, err := asAdjacency(v); err == nil && len(src) != len(dst) {
			t.Fatalf("%d sources, %d destinations", len(src), len(dst))
		}
	})
}
