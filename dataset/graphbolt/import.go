package graphbolt

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// Options controls Import.
type Options struct {
	// Feature is the name of the node feature_data entry of the features;
	// empty means "feat".
	Feature string
	// Task names the task whose sets and labels are imported; empty means
	// the first.
	Task string
	// Directed keeps the edges as given: row v lists the sources of the
	// edges into v (DGL's CSC). Otherwise the graph is symmetrized.
	Directed bool
	Threads  int // graph building goroutines; <= 0 means GOMAXPROCS

	// Target names a typed graph's labelled type; empty means the type of
	// the task's training seeds.
	Target string
	// NoReverse leaves out a typed graph's reverse relations, which are
	// added by default (dataset.AddReverse).
	NoReverse bool
}

// labelFeature is the node feature_data name whose array, where present,
// gives every vertex its label.
const labelFeature = "label"

// Import reads the GraphBolt on-disk dataset in dir (its metadata.yaml
// with a graph: section) into a dataset: the graph built as the other
// importers build theirs (self loops and repeated edges dropped), the node
// features, the labels (a node feature "label", or the labels of the
// task's sets) and the task's train, validation and test seeds.
func Import(dir string, o Options) (*dataset.Dataset, error) {
	m, err := readMetadata(dir)
	if err != nil {
		return nil, err
	}
	return importMetadata(dir, m, o)
}

// importMetadata imports the dataset m describes, its files in dir. The
// features come first: their rows check the vertex count before anything
// of that size is allocated.
func importMetadata(dir string, m *metadata, o Options) (*dataset.Dataset, error) {
	if isTyped(m.Graph) {
		return importTyped(dir, m, o)
	}
	if o.Target != "" || o.NoReverse {
		return nil, fmt.Errorf("%s: a graph of one type: --target and --no-reverse are for typed graphs", MetadataFile)
	}
	n, edgeFile, err := homogeneous(dir, m)
	if err != nil {
		return nil, err
	}
	d := &dataset.Dataset{Name: m.Name, Symmetric: !o.Directed}
	if d.Features, d.FeatDim, err = features(dir, m, cmp(o.Feature, "feat"), n); err != nil {
		return nil, err
	}
	src, dst, err := readEdges(dir, edgeFile, sameEnds(n))
	if err != nil {
		return nil, err
	}
	opt := graph.BuildOptions{Symmetrize: !o.Directed, DropSelfLoops: true, Dedup: true, Threads: o.Threads}
	if d.Graph, err = graph.FromEdges(n, dst, src, opt); err != nil {
		return nil, fmt.Errorf("%s: %w", edgeFile.path, err)
	}
	d.Preprocessing = dataset.GraphSteps(opt)
	if d.Name == "" {
		d.Name = filepath.Base(filepath.Clean(dir))
	}
	t, ti, err := pickTask(m, o.Task)
	if err != nil {
		return nil, err
	}
	if err := taskSets(dir, m, t, ti, d, seedType{n: n, says: fmt.Sprintf("graph.nodes[0].num is %d", n)}); err != nil {
		return nil, err
	}
	d.Source = fmt.Sprintf("GraphBolt on-disk dataset %s, task %s", filepath.Base(filepath.Clean(dir)), cmp(t.Name, fmt.Sprint(ti)))
	return d, nil
}

// cmp returns s, or def when s is empty.
func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// homogeneous checks that m describes one vertex type and one edge type
// in raw form, and returns the vertex count and the edge file.
func homogeneous(dir string, m *metadata) (int64, entry, error) {
	if m.Graph == nil {
		if m.Topology != nil {
			hint := ""
			if filepath.Base(filepath.Clean(dir)) == "preprocessed" {
				hint = fmt.Sprintf(" (%s, the directory above, may hold it)", filepath.Dir(filepath.Clean(dir)))
			}
			return 0, entry{}, fmt.Errorf("%s: graph_topology is a %s in %s, a PyTorch file fanout cannot read; import the dataset directory whose %s has the raw graph: section%s",
				MetadataFile, quote.Quote(m.Topology.Type), quote.Quote(m.Topology.Path), MetadataFile, hint)
		}
		return 0, entry{}, fmt.Errorf("%s: no graph: section (nodes and edges)", MetadataFile)
	}
	gd := m.Graph
	if len(gd.Nodes) != 1 || len(gd.Edges) != 1 || gd.Nodes[0].Type != "" || gd.Edges[0].Type != "" {
		var types []string
		for _, e := range gd.Edges {
			types = append(types, cmp(e.Type, "(untyped)"))
		}
		return 0, entry{}, fmt.Errorf("%s: graph: %d node types and %d edge types (%s): only homogeneous graphs (one of each, untyped) can be imported",
			MetadataFile, len(gd.Nodes), len(gd.Edges), quote.Quote(strings.Join(types, ", ")))
	}
	n := gd.Nodes[0].Num
	if n <= 0 || n >= graph.MaxInt32Vertices {
		return 0, entry{}, fmt.Errorf("%s: graph.nodes[0].num is %d, want 1 to %d", MetadataFile, n, graph.MaxInt32Vertices-1)
	}
	e := gd.Edges[0]
	return n, entry{field: "graph.edges[0]", format: e.Format, path: e.Path}, nil
}

// features reads the node feature_data entry name: [n, dim] or [n].
func features(dir string, m *metadata, name string, n int64) ([]float32, int, error) {
	i := slices.IndexFunc(m.Features, func(f featureData) bool { return f.Domain == "node" && f.Name == name })
	if i < 0 {
		var have []string
		for _, f := range m.Features {
			have = append(have, f.Domain+" "+f.Name)
		}
		return nil, 0, fmt.Errorf("%s: feature_data has no node feature %s (it has: %s)", MetadataFile, quote.Quote(name), quote.Quote(strings.Join(have, ", ")))
	}
	return featureEntry(dir, m, i, n)
}

// featureEntry reads feature_data[i], [n, dim] or [n] finite numbers.
func featureEntry(dir string, m *metadata, i int, n int64) ([]float32, int, error) {
	f := m.Features[i]
	name := f.Name
	feat, shape, err := readFloats(dir, entry{field: fmt.Sprintf("feature_data[%d] (%s)", i, quote.Quote(name)), format: f.Format, path: f.Path},
		func(shape []int64) string {
			if len(shape) < 1 || len(shape) > 2 || shape[0] != n || (len(shape) == 2 && shape[1] == 0) {
				return fmt.Sprintf("[%d, features] or [%d], a row per vertex", n, n)
			}
			return ""
		})
	if err != nil {
		return nil, 0, err
	}
	dim := 1
	if len(shape) == 2 {
		dim = int(shape[1])
	}
	if err := dataset.CheckFeatures(feat, dim); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", f.Path, err) // f.Path: at most maxPath bytes
	}
	return feat, dim, nil
}

// pickTask finds the task named name, or the first.
func pickTask(m *metadata, name string) (*task, int, error) {
	if len(m.Tasks) == 0 {
		return nil, 0, fmt.Errorf("%s: no tasks: a node classification task gives the train, validation and test sets", MetadataFile)
	}
	if name == "" {
		return &m.Tasks[0], 0, nil
	}
	var names []string
	for i := range m.Tasks {
		if m.Tasks[i].Name == name {
			return &m.Tasks[i], i, nil
		}
		names = append(names, m.Tasks[i].Name)
	}
	return nil, 0, fmt.Errorf("%s: no task %s (tasks: %s)", MetadataFile, quote.Quote(name), quote.Quote(strings.Join(names, ", ")))
}
