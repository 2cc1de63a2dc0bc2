package dataset

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsNoBackend: the on-disk dataset does not link the backends
// (element types come from the leaf package dtype).
func TestImportsNoBackend(t *testing.T) {
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range p.Imports {
		if imp == "github.com/fanout-gnn/fanout/backend" || strings.HasPrefix(imp, "github.com/fanout-gnn/fanout/backend/") {
			t.Errorf("package dataset imports %s", imp)
		}
	}
}
