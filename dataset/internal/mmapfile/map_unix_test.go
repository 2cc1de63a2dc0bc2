//go:build unix

package mmapfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadOnlyMapsThePrefix maps the first bytes of a file: the mapping
// holds them, and a later write to the file shows through it (a mapping,
// not a copy).
func TestReadOnlyMapsThePrefix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("abcdefgh"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, unmap, err := ReadOnly(f, 5)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "abcde" {
		t.Errorf("mapped %q, want %q", data, "abcde")
	}
	if _, err := f.WriteAt([]byte("X"), 1); err != nil {
		t.Fatal(err)
	}
	if data[1] != 'X' {
		t.Errorf("mapping %q did not see the write at byte 1: data was copied", data)
	}
	if err := unmap(); err != nil {
		t.Errorf("unmap: %v", err)
	}
}

// TestReadOnlyRefusesAnEmptyMapping: a size of 0 is an error, not an empty
// mapping, so callers handle empty files themselves.
func TestReadOnlyRefusesAnEmptyMapping(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "empty"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, _, err := ReadOnly(f, 0); err == nil {
		t.Error("mapping 0 bytes succeeded, want an error")
	}
}
