package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// entries lists dir's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteReplacesAndLeavesNoTemporary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	if err := os.WriteFile(path, []byte("old content, longer than the new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "new" {
		t.Fatalf("content %q, want %q", got, "new")
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "a.json" {
		t.Fatalf("directory holds %q, want only a.json", names)
	}
}

func TestWriteWithFailureKeepsTarget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteWith(path, func(w io.Writer) error {
		if _, err := w.Write([]byte("half of the new")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v, want boom naming %s", err, path)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("target holds %q after a failed write, want %q", got, "old")
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Fatalf("directory holds %q after a failed write, want only state.json", names)
	}
}

func TestWriteWithStreams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.bin")
	want := bytes.Repeat([]byte("0123456789"), 100_000)
	err := WriteWith(path, func(w io.Writer) error {
		for rest := want; len(rest) > 0; rest = rest[min(len(rest), 4096):] {
			if _, err := w.Write(rest[:min(len(rest), 4096)]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes, want %d written in pieces", len(got), len(want))
	}
}

func TestWriteMissingDirectoryNamesPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "f.txt")
	err := Write(path, []byte("x"))
	if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), path+": ") {
		t.Fatalf("error %v, want not-exist prefixed by %s", err, path)
	}
}

func TestTemporaryNamesStartWithPrefix(t *testing.T) {
	dir := t.TempDir()
	var seen []string
	err := WriteWith(filepath.Join(dir, "x"), func(io.Writer) error {
		seen = entries(t, dir)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || !strings.HasPrefix(seen[0], TempPrefix) {
		t.Fatalf("while writing, directory held %q, want one name starting %q", seen, TempPrefix)
	}
}
