package torchzip

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/fanout-gnn/fanout/internal/atomicfile"
)

// Write saves tensors as torch.save would (zip format, pickle protocol
// 2): a dict in key order, each tensor contiguous in its own storage of
// int64 (Ints) or float32 (Floats). The file is written atomically.
func Write(file string, tensors map[string]*Tensor) error {
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	name := "archive"
	p := pickler{}
	p.raw(0x80, 2, '}')
	p.raw('(')
	keys := Keys(tensors)
	sort.Strings(keys)
	for i, k := range keys {
		t := tensors[k]
		if t.Len() != int64(len(t.Ints)+len(t.Floats)) || (t.Ints != nil && t.Floats != nil) {
			return fmt.Errorf("%s: tensor %q of shape %v holds %d ints and %d floats", file, k, t.Shape, len(t.Ints), len(t.Floats))
		}
		class, data := "LongStorage", make([]byte, 0, 8*t.Len())
		for _, v := range t.Ints {
			data = binary.LittleEndian.AppendUint64(data, uint64(v))
		}
		if t.Floats != nil {
			class = "FloatStorage"
			for _, v := range t.Floats {
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(v)))
			}
		}
		key := strconv.Itoa(i)
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name + "/data/" + key, Method: zip.Store})
		if err == nil {
			_, err = w.Write(data)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		p.str(k)
		p.global("torch._utils", "_rebuild_tensor_v2")
		p.raw('(', '(')
		p.str("storage")
		p.global("torch", class)
		p.str(key)
		p.str("cpu")
		p.int(t.Len())
		p.raw('t', 'Q')
		p.int(0)
		stride := make([]int64, len(t.Shape))
		for d, s := len(t.Shape)-1, int64(1); d >= 0; d-- {
			stride[d], s = s, s*t.Shape[d]
		}
		p.ints(t.Shape)
		p.ints(stride)
		p.raw(0x89)
		p.global("collections", "OrderedDict")
		p.raw(')', 'R', 't', 'R')
	}
	p.raw('u', '.')
	var err error
	for _, e := range []struct {
		name string
		data []byte
	}{{"/byteorder", []byte("little")}, {"/data.pkl", p.buf}} {
		w, werr := zw.CreateHeader(&zip.FileHeader{Name: name + e.name, Method: zip.Store})
		if werr == nil {
			_, werr = w.Write(e.data)
		}
		err = errors.Join(err, werr)
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return atomicfile.Write(file, zbuf.Bytes())
}

// pickler writes the opcodes Write needs.
type pickler struct{ buf []byte }

func (p *pickler) raw(b ...byte) { p.buf = append(p.buf, b...) }

func (p *pickler) str(s string) {
	p.raw('X')
	p.buf = binary.LittleEndian.AppendUint32(p.buf, uint32(len(s)))
	p.buf = append(p.buf, s...)
}

func (p *pickler) global(module, name string) {
	p.raw('c')
	p.buf = append(p.buf, module+"\n"+name+"\n"...)
}

func (p *pickler) int(v int64) {
	p.raw(0x8a, 8)
	p.buf = binary.LittleEndian.AppendUint64(p.buf, uint64(v))
}

func (p *pickler) ints(v []int64) {
	p.raw('(')
	for _, x := range v {
		p.int(x)
	}
	p.raw('t')
}
