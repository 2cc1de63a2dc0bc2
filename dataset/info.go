package dataset

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/fanout-gnn/fanout/graph"
)

// Info summarizes a dataset for `fanout info`.
type Info struct {
	Name, Source  string
	Preprocessing []string
	Symmetric     bool
	NumNodes      int64
	NumEdges      int64 // stored (directed) edges
	WideIndices   bool  // indices are int64
	Degree        graph.DegreeStats
	FeatDim       int
	FeatureDType  string // float32 or bfloat16
	FeatureBytes  int64  // the feature table's size as held
	NumClasses    int
	NumTrain      int64
	NumValid      int64
	NumTest       int64
	Labelled      int64  // vertices whose label is not -1
	NodeIDs       string // the file of the original ids (ids.npy, ids.txt); "" for none
	// Link task: edges per set and fixed negatives per held-out edge (0: none).
	LinkTrain, LinkValid, LinkTest int64
	LinkNegatives                  int
	// A typed dataset's types and relations (typed_info.go), and the
	// name of its target type; nil and "" for a dataset of one type.
	Types     []TypeInfo
	Relations []RelationInfo
	Target    string
}

// Info computes the summary (one pass over indptr and labels).
func (d *Dataset) Info() Info {
	i := Info{
		Name: d.Name, Source: d.Source, Symmetric: d.Symmetric, Preprocessing: d.Preprocessing,
		FeatDim: d.FeatDim, FeatureDType: d.FeatureDType().String(), NumClasses: d.NumClasses,
		NumTrain: int64(len(d.Train)), NumValid: int64(len(d.Valid)), NumTest: int64(len(d.Test)),
		NodeIDs: cmp.Or(nodeIDsKey(d), d.idsFile),
	}
	var m Manifest
	linkKeys(&m, d)
	i.LinkTrain, i.LinkValid, i.LinkTest, i.LinkNegatives = m.LinkTrain, m.LinkValid, m.LinkTest, m.LinkNegatives
	if g := d.Graph; g != nil {
		i.NumNodes, i.NumEdges, i.WideIndices = g.NumNodes, g.NumEdges(), g.Wide()
		i.Degree = g.DegreeStats()
		i.FeatureBytes = d.FeatureBytes()
	}
	if d.Typed() {
		d.typedInfo(&i)
	}
	for _, c := range d.Labels {
		if c >= 0 {
			i.Labelled++
		}
	}
	return i
}

// String renders the summary as aligned "key  value" lines.
func (i Info) String() string {
	var b strings.Builder
	line := func(key, format string, args ...any) {
		fmt.Fprintf(&b, "%-10s %s\n", key, fmt.Sprintf(format, args...))
	}
	if i.Name != "" {
		line("name", "%s", i.Name)
	}
	if i.Source != "" {
		line("source", "%s", i.Source)
	}
	if len(i.Preprocessing) > 0 {
		line("preprocess", "%s", strings.Join(i.Preprocessing, ", "))
	}
	if len(i.Types) > 0 {
		i.typedString(&b, line)
		return b.String()
	}
	line("vertices", "%s", group(i.NumNodes))
	kind := "directed"
	if i.Symmetric {
		kind = "directed, symmetric"
	}
	ids := "int32"
	if i.WideIndices {
		ids = "int64"
	}
	line("edges", "%s (%s; %s ids)", group(i.NumEdges), kind, ids)
	s := i.Degree
	line("degree", "mean %.2f  min %d  p50 %d  p90 %d  p99 %d  max %d", s.Mean, s.Min, s.P50, s.P90, s.P99, s.Max)
	line("isolated", "%s (%s)", group(s.Isolated), percent(s.Isolated, i.NumNodes))
	line("features", "%d %s per vertex (%s)", i.FeatDim, i.FeatureDType, size(i.FeatureBytes))
	line("classes", "%d", i.NumClasses)
	line("labelled", "%s (%s)", group(i.Labelled), percent(i.Labelled, i.NumNodes))
	line("split", "train %s  valid %s  test %s", group(i.NumTrain), group(i.NumValid), group(i.NumTest))
	if l := linkInfo(i); l != "" {
		line("links", "%s", l)
	}
	if i.NodeIDs != "" {
		kind := "64-bit integers"
		if i.NodeIDs == IDNamesFile {
			kind = "strings"
		}
		line("ids", "the original ids in %s (%s)", i.NodeIDs, kind)
	}
	return b.String()
}

// size renders a byte count in binary units: "1.0 MiB".
func size(b int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(b), 0
	for v >= 1024 && u < len(units)-1 {
		v, u = v/1024, u+1
	}
	if u == 0 {
		return fmt.Sprintf("%d B", b)
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}

// percent renders part/whole as "12.3%".
func percent(part, whole int64) string {
	if whole == 0 {
		return "0.0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

// group renders n with thousands separators: 2,097,152.
func group(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
