package dataset

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/fanout-gnn/fanout/graph"
)

// TypeInfo summarizes one vertex type of a typed dataset.
type TypeInfo struct {
	Name         string
	Count        int64
	FeatDim      int   // 0: no features
	FeatureBytes int64 // the type's table as held
	NodeIDs      string
}

// RelationInfo summarizes one relation of a typed dataset: its edges and
// the in-degrees of its destination vertices (the rows of its graph).
type RelationInfo struct {
	Src, Name, Dst string
	NumEdges       int64
	Degree         graph.DegreeStats
}

// typedInfo fills in a typed dataset's part of i: its types, relations
// and target.
func (d *Dataset) typedInfo(i *Info) {
	i.Target = d.Types[d.Target].Name
	for _, t := range d.Types {
		i.Types = append(i.Types, TypeInfo{Name: t.Name, Count: t.Count, FeatDim: t.FeatDim, FeatureBytes: t.featureBytes(),
			NodeIDs: cmp.Or(nodeIDsOf(t.IDs), t.idsFile)})
	}
	for _, r := range d.Relations {
		i.Relations = append(i.Relations, RelationInfo{Src: d.Types[r.Src].Name, Name: r.Name, Dst: d.Types[r.Dst].Name,
			NumEdges: r.Graph.NumEdges(), Degree: r.Graph.DegreeStats()})
	}
	i.NumNodes, i.NumEdges, i.FeatureBytes = d.NumVertices(), d.NumEdges(), d.FeatureBytes()
}

// nodeIDsOf is the file that holds ids, or "" for none.
func nodeIDsOf(ids *NodeIDs) string {
	if ids == nil {
		return ""
	}
	return ids.file()
}

// typedString renders a typed dataset's summary: the types with their
// counts and features, the relations with their edges and in-degrees,
// then the target's classes and split.
func (i Info) typedString(b *strings.Builder, line func(key, format string, args ...any)) {
	line("vertices", "%s of %d types", group(i.NumNodes), len(i.Types))
	width := 0
	for _, t := range i.Types {
		width = max(width, len(t.Name))
	}
	for _, t := range i.Types {
		feat := "no features (a learned embedding)"
		if t.FeatDim > 0 {
			feat = fmt.Sprintf("%d %s features (%s)", t.FeatDim, i.FeatureDType, size(t.FeatureBytes))
		}
		mark := ""
		if t.Name == i.Target {
			mark = "  target"
		}
		if t.NodeIDs != "" {
			mark += "  ids in " + TypeDir(t.Name) + "/" + t.NodeIDs
		}
		fmt.Fprintf(b, "  %-*s %13s  %s%s\n", width, t.Name, group(t.Count), feat, mark)
	}
	line("edges", "%s in %d relations (rows: destinations)", group(i.NumEdges), len(i.Relations))
	for _, r := range i.Relations {
		s := r.Degree
		fmt.Fprintf(b, "  (%s, %s, %s) %s edges; in-degree mean %.2f  p50 %d  p90 %d  p99 %d  max %d; %s of %s without one\n",
			r.Src, r.Name, r.Dst, group(r.NumEdges), s.Mean, s.P50, s.P90, s.P99, s.Max, percent(s.Isolated, countOf(i, r.Dst)), r.Dst)
	}
	line("classes", "%d (target %s)", i.NumClasses, i.Target)
	line("labelled", "%s (%s of %s)", group(i.Labelled), percent(i.Labelled, countOf(i, i.Target)), i.Target)
	line("split", "train %s  valid %s  test %s", group(i.NumTrain), group(i.NumValid), group(i.NumTest))
}

// countOf is the count of the type named name.
func countOf(i Info, name string) int64 {
	for _, t := range i.Types {
		if t.Name == name {
			return t.Count
		}
	}
	return 0
}
