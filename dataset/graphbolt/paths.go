package graphbolt

import (
	"fmt"
	"path/filepath"

	"github.com/fanout-gnn/fanout/internal/quote"
)

// maxPath bounds a path in metadata.yaml, in bytes, so that every message
// naming a file quotes at most quote.Limit bytes of the metadata.
const maxPath = quote.Limit

// checkPaths checks every path metadata.yaml names (edge files, feature
// data, the sets' arrays, the preprocessed topology) before any is
// opened: each is relative to the dataset's directory and stays inside
// it (no absolute path, no ".." above it), and is at most maxPath bytes.
// Symbolic links inside the directory are followed as the system does.
// The error names the entry and quotes the path.
func (m *metadata) checkPaths() error {
	type named struct{ field, path string }
	var paths []named
	if m.Topology != nil {
		paths = append(paths, named{"graph_topology", m.Topology.Path})
	}
	if m.Graph != nil {
		for i, e := range m.Graph.Edges {
			paths = append(paths, named{fmt.Sprintf("graph.edges[%d]", i), e.Path})
		}
	}
	for i, f := range m.Features {
		paths = append(paths, named{fmt.Sprintf("feature_data[%d]", i), f.Path})
	}
	for t, task := range m.Tasks {
		for _, s := range []struct {
			name  string
			parts []tvtSet
		}{{"train_set", task.Train}, {"validation_set", task.Validation}, {"test_set", task.Test}} {
			for j, part := range s.parts {
				for k, d := range part.Data {
					paths = append(paths, named{fmt.Sprintf("tasks[%d].%s[%d].data[%d]", t, s.name, j, k), d.Path})
				}
			}
		}
	}
	for _, p := range paths {
		switch {
		case p.path == "": // entry.file says so where the entry is read
		case !filepath.IsLocal(filepath.FromSlash(p.path)):
			return fmt.Errorf("%s: %s: path %s leaves the dataset's directory: paths there are relative to it and stay inside it",
				MetadataFile, p.field, quote.Quote(p.path))
		case len(p.path) > maxPath:
			return fmt.Errorf("%s: %s: path %s is longer than %d bytes", MetadataFile, p.field, quote.Quote(p.path), maxPath)
		}
	}
	return nil
}
