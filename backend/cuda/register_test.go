package cuda

import "testing"

// TestCloseUnregisters: memory UploadHost registered in place and never
// freed is unregistered when its backend closes, so another backend of the
// same (primary) context registers it again in place, and the memory may
// be the caller's again: left registered, a later copy from memory the Go
// runtime reused there failed with CUDA_ERROR_INVALID_VALUE.
func TestCloseUnregisters(t *testing.T) {
	data := make([]float32, 1<<20)
	for round := range 2 {
		b := openTest(t, Options{})
		buf, err := b.UploadHost(data)
		if err != nil {
			t.Fatal(err)
		}
		if x := buf.(*buffer); x.root == nil || !x.root.registered {
			t.Fatalf("round %d: the memory was copied into pinned memory instead of registered in place (still registered by the backend before?)", round)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
