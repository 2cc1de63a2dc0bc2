package wrapgen

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// Test is the test of every package with generated files: a subtest per
// file of pkgs (directories below backendDir) fails when the file differs
// from what the op descriptions generate now. A test binary run away from
// its package's directory, where the descriptions are not found, skips.
func Test(t *testing.T, backendDir string, pkgs ...string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(backendDir, "ops")); err != nil {
		t.Skipf("the op descriptions are not at %s (a test binary run outside its package's directory): %v",
			filepath.Join(backendDir, "ops"), err)
	}
	for _, pkg := range pkgs {
		files, err := Stale(backendDir, pkg)
		if err != nil {
			t.Fatal(err)
		}
		names := make([]string, 0, len(files))
		for name := range files {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			stale := files[name]
			t.Run(name, func(t *testing.T) {
				if stale != nil {
					t.Error(stale)
				}
			})
		}
	}
}
