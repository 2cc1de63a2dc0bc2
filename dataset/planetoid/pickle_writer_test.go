package planetoid

import (
	"bytes"
	"encoding/binary"
)

// pickleWriter emits protocol-2 pickle opcodes by hand, the way Python 2's
// cPickle writes NumPy arrays, SciPy CSR matrices and defaultdicts.
type pickleWriter struct {
	buf  bytes.Buffer
	memo int
}

func newPickle() *pickleWriter {
	w := &pickleWriter{}
	w.buf.Write([]byte{0x80, 2}) // PROTO 2
	return w
}

func (w *pickleWriter) op(b ...byte) *pickleWriter { w.buf.Write(b); return w }

func (w *pickleWriter) global(module, name string) *pickleWriter {
	w.buf.WriteString("c" + module + "\n" + name + "\n")
	return w
}

// put memoizes the top of the stack (BINPUT) and returns its index.
func (w *pickleWriter) put() int {
	w.memo++
	if w.memo < 256 {
		w.op('q', byte(w.memo))
	} else {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(w.memo))
		w.op('r', b[0], b[1], b[2], b[3])
	}
	return w.memo
}

func (w *pickleWriter) get(i int) *pickleWriter { return w.op('h', byte(i)) }

func (w *pickleWriter) int(v int) *pickleWriter {
	switch {
	case v >= 0 && v < 256:
		return w.op('K', byte(v))
	case v >= 0 && v < 65536:
		return w.op('M', byte(v), byte(v>>8))
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(int32(v)))
	return w.op('J', b[0], b[1], b[2], b[3])
}

// str writes SHORT_BINSTRING or BINSTRING (Python 2 str: raw bytes).
func (w *pickleWriter) str(s string) *pickleWriter {
	if len(s) < 256 {
		w.op('U', byte(len(s)))
	} else {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(len(s)))
		w.op('T', b[0], b[1], b[2], b[3])
	}
	w.buf.WriteString(s)
	return w
}

func (w *pickleWriter) stop() []byte {
	w.op('.')
	return w.buf.Bytes()
}

// ndarray writes numpy.core.multiarray._reconstruct(ndarray, (0,), 'b') with
// its BUILD state (1, shape, dtype(descr), False, raw).
func (w *pickleWriter) ndarray(shape []int, descr string, raw []byte) *pickleWriter {
	w.global("numpy.core.multiarray", "_reconstruct")
	w.global("numpy", "ndarray")
	w.int(0).op(0x85).str("b").op(0x87, 'R') // (0,), 'b' -> REDUCE
	w.op('(').int(1)
	w.op('(')
	for _, d := range shape {
		w.int(d)
	}
	w.op('t')
	w.global("numpy", "dtype").str(descr).int(0).int(1).op(0x87, 'R')
	w.op('(').int(3).str("<").op('N', 'N', 'N').int(-1).int(-1).int(0).op('t', 'b')
	w.op(0x89).str(string(raw)).op('t', 'b')
	return w
}

// le encodes v as a little-endian array, as numpy's "<f4", "<i4" and
// "<f8" hold it.
func le[T float32 | int32 | float64](v []T) []byte {
	b, err := binary.Append(nil, binary.LittleEndian, v)
	if err != nil {
		panic(err) // unreachable: T has a fixed size
	}
	return b
}

// csrPickle pickles a dense [rows][cols] matrix as a scipy.sparse.csr.csr_matrix.
func csrPickle(dense [][]float32, cols int) []byte {
	var indptr, indices []int32
	var data []float32
	indptr = append(indptr, 0)
	for _, row := range dense {
		for c, v := range row {
			if v != 0 {
				indices = append(indices, int32(c))
				data = append(data, v)
			}
		}
		indptr = append(indptr, int32(len(indices)))
	}
	w := newPickle()
	w.global("scipy.sparse.csr", "csr_matrix").put()
	w.op(')', 0x81).put() // NEWOBJ
	w.op('}').put()
	w.op('(')
	w.str("format").str("csr")
	w.str("_shape").int(len(dense)).int(cols).op(0x86)
	w.str("indptr").ndarray([]int{len(indptr)}, "i4", le(indptr))
	w.str("_cs_matrix__has_sorted_indices").op(0x88)
	w.str("indices").ndarray([]int{len(indices)}, "i4", le(indices))
	w.str("maxprint").int(50)
	w.str("data").ndarray([]int{len(data)}, "f4", le(data))
	w.op('u', 'b')
	return w.stop()
}

// oneHotPickle pickles labels as a [len(labels), classes] int32 one-hot
// numpy array (a label of -1 gives an all-zero row).
func oneHotPickle(labels []int, classes int) []byte {
	v := make([]int32, len(labels)*classes)
	for i, l := range labels {
		if l >= 0 {
			v[i*classes+l] = 1
		}
	}
	return newPickle().ndarray([]int{len(labels), classes}, "i4", le(v)).stop()
}

// graphPickle pickles adjacency lists as collections.defaultdict(list),
// keys in the given order.
func graphPickle(keys []int, adj map[int][]int) []byte {
	w := newPickle()
	w.global("collections", "defaultdict").put()
	w.global("__builtin__", "list").put()
	w.op(0x85, 'R').put()
	w.op('(')
	for _, k := range keys {
		w.int(k).op(']').put()
		switch nbrs := adj[k]; len(nbrs) {
		case 0:
		case 1:
			w.int(nbrs[0]).op('a')
		default:
			w.op('(')
			for _, n := range nbrs {
				w.int(n)
			}
			w.op('e')
		}
	}
	w.op('u')
	return w.stop()
}
