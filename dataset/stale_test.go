package dataset

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// TestWriteRemovesStaleTemporaries: the temporary directories a killed
// write of the same dataset left (".ds.tmp-*" with half its files, and
// ".ds.old-*" beside a complete "ds") are removed by the next write, which
// names them; one a running write holds, another dataset's, and an
// ".old-" one while the dataset itself is missing (the old data of a write
// killed between its two renames) stay. Before, nothing removed them.
func TestWriteRemovesStaleTemporaries(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "aix" {
		t.Skip("no flock on " + runtime.GOOS + ": stale temporaries cannot be told from running writes")
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "ds")
	mk := func(name string) string {
		p := filepath.Join(parent, name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, FeatFile), []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk(".ds.tmp-111")
	mk(".other.tmp-222")
	mk(".ds.old-333")
	running, err := lockDir(mk(".ds.tmp-444"))
	if err != nil || running == nil {
		t.Fatalf("lock: %v", err)
	}
	// The dataset is missing: the .old- one may be its only copy.
	stale, err := WriteContext(context.Background(), dir, ring(10))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stale, []string{".ds.tmp-111"}) {
		t.Errorf("removed %v, want [.ds.tmp-111]", stale)
	}
	// Now that ds is there, the .old- one is a leftover too.
	unlockDir(running)
	stale, err = WriteContext(context.Background(), dir, ring(10))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(stale)
	if !slices.Equal(stale, []string{".ds.old-333", ".ds.tmp-444"}) {
		t.Errorf("removed %v, want [.ds.old-333 .ds.tmp-444]", stale)
	}
	var names []string
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{".other.tmp-222", "ds"}) {
		t.Errorf("left %v, want [.other.tmp-222 ds]", names)
	}
}

// TestWriteStopsWhenCancelled: a write whose context is done removes what
// it wrote and returns the context's error; an existing dataset stays.
func TestWriteStopsWhenCancelled(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "ds")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := WriteContext(ctx, dir, ring(10)); err != context.Canceled {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Fatalf("a cancelled write left %d entries", len(entries))
	}
	if err := Write(dir, ring(10)); err != nil {
		t.Fatal(err)
	}
	big := ring(10)
	big.Name = "other"
	if _, err := WriteContext(ctx, dir, big); err != context.Canceled {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	onlyRing(t, parent, dir)
}

// onlyRing checks that dir holds ring(10) and parent nothing else: a write
// that failed or stopped left the dataset there as it was.
func onlyRing(t *testing.T, parent, dir string) {
	t.Helper()
	got, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	sameContent(t, got, ring(10))
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("parent holds %d entries, want 1", len(entries))
	}
}
