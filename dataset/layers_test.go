package dataset

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDatasetLinksNoTrainer holds the on-disk dataset and its importers
// below the trainer: no dataset/... package may depend (directly or not)
// on a package of the module other than dataset/..., graph, dtype, rng
// and internal/... (so never on checkpoint, backend or nn, which would
// link the GPU backend into every importer). It asks the go command,
// which go test puts on PATH.
func TestDatasetLinksNoTrainer(t *testing.T) {
	const module = "github.com/fanout-gnn/fanout/"
	out, err := exec.Command("go", "list", "-deps", "-test=false",
		"-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"dataset/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := func(p string) bool {
		rest, ok := strings.CutPrefix(p, module)
		if !ok {
			return true // the standard library and other modules
		}
		for _, root := range []string{"dataset", "graph", "dtype", "rng", "internal"} {
			if rest == root || strings.HasPrefix(rest, root+"/") {
				return true
			}
		}
		return false
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if allowed(fields[0]) && !allowed(imp) {
				t.Errorf("%s imports %s", fields[0], imp)
			}
		}
	}
}
