package graphbolt

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// isTyped reports whether the raw graph has vertex or edge types: several
// of either, or any named.
func isTyped(g *graphData) bool {
	if g == nil {
		return false
	}
	named := slices.ContainsFunc(g.Nodes, func(n nodeCount) bool { return n.Type != "" }) ||
		slices.ContainsFunc(g.Edges, func(e edgeFile) bool { return e.Type != "" })
	return named || len(g.Nodes) > 1 || len(g.Edges) > 1
}

// importTyped imports a graph of several types: graph.nodes gives each
// type's count, graph.edges each relation's file (its type written
// src:rel:dst, as DGL writes canonical edge types), the node feature
// entries named o.Feature give the types' features (a type without one is
// featureless), and the task's sets, whose seeds are one type's, the
// target's (o.Target, or the type of the training set), give the splits
// and, with a node feature "label" of that type, the labels. Each
// relation's graph drops repeats (and self loops within a type) and gets
// its reverse unless o.NoReverse (dataset.BuildRelations).
func importTyped(dir string, m *metadata, o Options) (*dataset.Dataset, error) {
	if o.Directed {
		return nil, fmt.Errorf("%s: typed relations keep their direction, and get their reverses unless --no-reverse, instead of --directed", MetadataFile)
	}
	d := &dataset.Dataset{Name: m.Name}
	var err error
	if d.Types, err = vertexTypes(m.Graph); err != nil {
		return nil, err
	}
	for i := range d.Types {
		if err := typeFeatures(dir, m, cmp(o.Feature, "feat"), &d.Types[i]); err != nil {
			return nil, err
		}
	}
	var lists []dataset.EdgeList
	for i, e := range m.Graph.Edges {
		l, err := readRelation(dir, i, e, d.Types)
		if err != nil {
			return nil, err
		}
		lists = append(lists, l)
	}
	if err := dataset.CheckFeatureless(d.Types, lists); err != nil {
		return nil, fmt.Errorf("%s: graph.nodes: %w", MetadataFile, err)
	}
	rels, err := dataset.BuildRelations(d.Types, lists, dataset.RelationOptions{Reverse: !o.NoReverse, Threads: o.Threads})
	if err != nil {
		return nil, err
	}
	d.Relations, d.Preprocessing = rels, dataset.TypedSteps(!o.NoReverse)
	if d.Name == "" {
		d.Name = filepath.Base(filepath.Clean(dir))
	}
	t, ti, err := pickTask(m, o.Task)
	if err != nil {
		return nil, err
	}
	if d.Target, err = targetType(t, ti, d.Types, o.Target); err != nil {
		return nil, err
	}
	target := d.Types[d.Target]
	d.FeatDim = target.FeatDim
	v := seedType{n: target.Count, typ: target.Name, says: fmt.Sprintf("type %s has %d vertices", target.Name, target.Count)}
	if err := taskSets(dir, m, t, ti, d, v); err != nil {
		return nil, err
	}
	d.Source = fmt.Sprintf("GraphBolt on-disk dataset %s, task %s, target %s", filepath.Base(filepath.Clean(dir)), cmp(t.Name, fmt.Sprint(ti)), target.Name)
	return d, nil
}

// vertexTypes are graph.nodes' types, each named once, with a count.
func vertexTypes(g *graphData) ([]dataset.VertexType, error) {
	var types []dataset.VertexType
	for i, n := range g.Nodes {
		field := fmt.Sprintf("graph.nodes[%d]", i)
		if n.Type == "" {
			var etypes []string
			for _, e := range g.Edges {
				etypes = append(etypes, e.Type)
			}
			return nil, fmt.Errorf("%s: %s has no type, but the graph is typed (%d node types; edge types %s): a typed graph names every node type",
				MetadataFile, field, len(g.Nodes), quote.Quote(strings.Join(etypes, ", ")))
		}
		if err := dataset.CheckName(MetadataFile+": "+field+".type", n.Type); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(types, func(t dataset.VertexType) bool { return t.Name == n.Type }) {
			return nil, fmt.Errorf("%s: %s: type %s is listed twice", MetadataFile, field, n.Type)
		}
		if n.Num < 1 || n.Num > dataset.MaxTypeVertices {
			return nil, fmt.Errorf("%s: %s (%s): num is %d, want 1 to %d", MetadataFile, field, n.Type, n.Num, dataset.MaxTypeVertices)
		}
		types = append(types, dataset.VertexType{Name: n.Type, Count: n.Num})
	}
	return types, nil
}

// typeFeatures reads the node feature entry name of type t, where there is
// one: [count, dim] or [count].
func typeFeatures(dir string, m *metadata, name string, t *dataset.VertexType) error {
	i := slices.IndexFunc(m.Features, func(f featureData) bool { return f.Domain == "node" && f.Name == name && f.Type == t.Name })
	if i < 0 {
		return nil
	}
	var err error
	t.Features, t.FeatDim, err = featureEntry(dir, m, i, t.Count)
	return err
}

// readRelation reads graph.edges[i], whose type is src:rel:dst.
func readRelation(dir string, i int, e edgeFile, types []dataset.VertexType) (dataset.EdgeList, error) {
	field := fmt.Sprintf("graph.edges[%d]", i)
	var l dataset.EdgeList
	parts := strings.Split(e.Type, ":")
	if len(parts) != 3 {
		return l, fmt.Errorf("%s: %s: type %s, want source:relation:destination", MetadataFile, field, quote.Quote(e.Type))
	}
	find := func(name string) int {
		return slices.IndexFunc(types, func(t dataset.VertexType) bool { return t.Name == name })
	}
	l.Name, l.Src, l.Dst = parts[1], find(parts[0]), find(parts[2])
	if l.Src < 0 || l.Dst < 0 {
		return l, fmt.Errorf("%s: %s: type %s joins a type that graph.nodes does not list", MetadataFile, field, quote.Quote(e.Type))
	}
	if err := dataset.CheckName(MetadataFile+": "+field+": the relation", l.Name); err != nil {
		return l, err
	}
	var at ends
	for side, t := range []int{l.Src, l.Dst} {
		at.n[side] = types[t].Count
		at.says[side] = fmt.Sprintf("type %s has %d vertices", types[t].Name, types[t].Count)
	}
	var err error
	l.From, l.To, err = readEdges(dir, entry{field: field, format: e.Format, path: e.Path}, at)
	return l, err
}

// targetType is the type of task t's seeds: want where given, otherwise
// the type of the training set's first part.
func targetType(t *task, ti int, types []dataset.VertexType, want string) (int, error) {
	if want == "" && len(t.Train) > 0 {
		want = t.Train[0].Type
	}
	i := slices.IndexFunc(types, func(ty dataset.VertexType) bool { return ty.Name == want })
	if i < 0 {
		return 0, fmt.Errorf("%s: tasks[%d]: the target type %s is not among graph.nodes' types", MetadataFile, ti, quote.Quote(want))
	}
	return i, nil
}
