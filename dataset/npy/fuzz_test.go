package npy

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzRead feeds arbitrary bytes to ReadHeader and Read: they must not panic,
// and whatever Read accepts must survive a Write/Read round trip.
func FuzzRead(f *testing.F) {
	for _, seed := range []struct {
		data  any
		shape []int64
	}{
		{[]float32{1, 2, 3, 4}, []int64{2, 2}},
		{[]int64{5}, []int64{}},
		{[]bool{true}, []int64{1}},
		{[]uint8{}, []int64{0}},
	} {
		var buf bytes.Buffer
		if err := Write(&buf, seed.data, seed.shape); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
		f.Add(buf.Bytes()[:buf.Len()-1])
	}
	f.Add(rawFile(3, `{"descr": ">u2", "fortran_order": True, "shape": (2L,)}`, []byte{1, 2, 3, 4}))
	f.Add(rawFile(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 0, 9), }", nil))
	f.Add([]byte("\x93NUMPY\x01\x00\xff\xff{"))
	f.Fuzz(func(t *testing.T, in []byte) {
		h, herr := ReadHeader(bytes.NewReader(in))
		data, shape, err := Read(bytes.NewReader(in))
		if err != nil {
			return
		}
		if herr != nil {
			t.Fatalf("Read accepted what ReadHeader rejected: %v", herr)
		}
		if !reflect.DeepEqual(shape, h.Shape) {
			t.Fatalf("shape %v, header shape %v", shape, h.Shape)
		}
		var buf bytes.Buffer
		if err := Write(&buf, data, shape); err != nil {
			t.Fatalf("Write of what Read returned: %v", err)
		}
		again, shape2, err := Read(&buf)
		if err != nil {
			t.Fatalf("Read of what Write wrote: %v", err)
		}
		if !bytes.Equal(bytesOf(again), bytesOf(data)) || !reflect.DeepEqual(shape2, shape) {
			t.Fatalf("round trip changed the array")
		}
	})
}
