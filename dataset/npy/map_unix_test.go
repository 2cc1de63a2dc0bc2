//go:build unix

package npy

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMapIsZeroCopy: a change written into the file after Map shows through
// the returned slice, so it aliases the mapping rather than a copy.
func TestMapIsZeroCopy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.npy")
	if err := WriteFile(path, []int32{1, 2, 3}, []int64{3}); err != nil {
		t.Fatal(err)
	}
	data, _, closer, err := Map(path)
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := ReadHeader(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{9, 0, 0, 0}, h.DataOffset+4); err != nil {
		t.Fatal(err)
	}
	if got := data.([]int32); got[1] != 9 {
		t.Errorf("mapped slice %v did not see the write (want [1 9 3]): data was copied", got)
	}
}
