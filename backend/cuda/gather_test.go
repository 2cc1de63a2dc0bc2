package cuda

import "testing"

// TestGatherWords: a row copy takes the widest word that divides the row's
// bytes and both addresses.
func TestGatherWords(t *testing.T) {
	for _, c := range []struct {
		rowBytes   int
		table, out uintptr
		kernel     string
		words      int
	}{
		{400, 0, 0, "gather_rows4", 25},   // 100 float32
		{200, 0, 0, "gather_rows2", 25},   // 100 bfloat16
		{200, 0, 8, "gather_rows2", 25},   // out 8-byte aligned
		{200, 0, 4, "gather_rows1", 50},   // out 4-byte aligned
		{200, 2, 0, "gather_rows_h", 100}, // table at an odd bfloat16
		{6, 0, 0, "gather_rows_h", 3},     // 3 bfloat16
		{12, 0, 0, "gather_rows1", 3},     // 3 float32
		{32, 16, 48, "gather_rows4", 2},   // 16 bfloat16
	} {
		k, w := gatherWords(c.rowBytes, c.table, c.out)
		if k != c.kernel || w != c.words {
			t.Errorf("gatherWords(%d, %#x, %#x) = %s, %d; want %s, %d", c.rowBytes, c.table, c.out, k, w, c.kernel, c.words)
		}
	}
}
