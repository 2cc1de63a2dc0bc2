package featstore

import (
	"go/build"
	"testing"
)

// TestImportsNoSampler: the feature stores do not depend on the sampler
// (the hybrid driver's ranking of rows lives with the driver).
func TestImportsNoSampler(t *testing.T) {
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range p.Imports {
		if imp == "github.com/fanout-gnn/fanout/sample" {
			t.Errorf("package featstore imports %s", imp)
		}
	}
}
