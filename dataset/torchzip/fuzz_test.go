package torchzip

import (
	"archive/zip"
	"bytes"
	"testing"
)

// FuzzReadArchive: any data.pkl, beside a small storage, is read or
// refused with an error; never a panic, and never more than the budget.
func FuzzReadArchive(f *testing.F) {
	f.Add(transposedPickle(6, ""))
	f.Add(transposedPickle(5, ""))
	f.Add(transposedPickle(6, "os\nsystem\n"))
	f.Add([]byte{0x80, 0x02, '}', '.'})
	f.Fuzz(func(t *testing.T, pkl []byte) {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, e := range []struct {
			name string
			data []byte
		}{{"split/data.pkl", pkl}, {"split/data/0", int32s(1, 2, 3, 4, 5, 6)}} {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Store})
			if err != nil {
				t.Fatal(err)
			}
			w.Write(e.data)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := readArchive(zr, 1<<16)
		if err != nil {
			return
		}
		for name, tensor := range out {
			if tensor.Len() < 0 || tensor.Len() > 1<<16 {
				t.Fatalf("%s: %d elements from a 24-byte storage under a 64 KiB budget", name, tensor.Len())
			}
		}
	})
}
