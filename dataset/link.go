package dataset

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fanout-gnn/fanout/graph"
)

// Files of a link-prediction task: vertex pairs, int32 [pairs, 2] of
// (source, destination) rows.
const (
	// LinkTrainFile holds the training edges, each undirected edge once;
	// they are edges of the graph (the message-passing graph).
	LinkTrainFile = "link_train.npy"
	// LinkValidFile and LinkTestFile hold the held-out edges, which are not
	// in the graph.
	LinkValidFile = "link_valid.npy"
	LinkTestFile  = "link_test.npy"
	// LinkValidNegFile and LinkTestNegFile hold the fixed evaluation
	// negatives: row i·k+j (k = link_negatives) is negative j of positive i,
	// with positive i's source; no negative is an edge of the source graph.
	LinkValidNegFile = "link_valid_neg.npy"
	LinkTestNegFile  = "link_test_neg.npy"
)

// linkFiles are the files a dataset with a link task holds.
var linkFiles = []string{LinkTrainFile, LinkValidFile, LinkTestFile, LinkValidNegFile, LinkTestNegFile}

// LinkSplit is a link-prediction task's edge sets: flat [pairs, 2] int32
// rows of (source, destination). Negatives is the number of fixed
// negatives per validation and test positive (ValidNeg and TestNeg hold
// Negatives rows per positive, in the positives' order).
type LinkSplit struct {
	Train, Valid, Test []int32
	ValidNeg, TestNeg  []int32
	Negatives          int
}

// Pairs is the number of pairs in a flat [pairs, 2] array.
func Pairs(p []int32) int { return len(p) / 2 }

// linkArrays lists the split's arrays with their files and manifest counts.
func (s *LinkSplit) linkArrays() []linkArray {
	k := int64(s.Negatives)
	return []linkArray{
		{LinkTrainFile, "link_train", &s.Train, 1, "train"},
		{LinkValidFile, "link_valid", &s.Valid, 1, "valid"},
		{LinkTestFile, "link_test", &s.Test, 1, "test"},
		{LinkValidNegFile, "link_valid × link_negatives", &s.ValidNeg, k, "valid"},
		{LinkTestNegFile, "link_test × link_negatives", &s.TestNeg, k, "test"},
	}
}

type linkArray struct {
	file, field string
	pairs       *[]int32
	per         int64 // rows per positive of the split named by of
	of          string
}

// linkKeys sets the manifest's link keys from d's split.
func linkKeys(m *Manifest, d *Dataset) {
	if s := d.Link; s != nil {
		m.LinkTrain, m.LinkValid, m.LinkTest = int64(Pairs(s.Train)), int64(Pairs(s.Valid)), int64(Pairs(s.Test))
		m.LinkNegatives = s.Negatives
	}
}

// checkLink checks the manifest's link keys: all or none, and in range.
func (m Manifest) checkLink() error {
	if m.LinkTrain == 0 && m.LinkValid == 0 && m.LinkTest == 0 && m.LinkNegatives == 0 {
		return nil
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"link_train", m.LinkTrain}, {"link_valid", m.LinkValid}, {"link_test", m.LinkTest}, {"link_negatives", int64(m.LinkNegatives)}} {
		if f.v < 0 || f.v > MaxEdges {
			return fmt.Errorf("%s is %d, want [0, %d]", f.name, f.v, int64(MaxEdges))
		}
	}
	if m.LinkTrain == 0 {
		return errors.New("link_train is 0 or missing, but other link keys are set: a link task needs training edges")
	}
	if m.LinkNegatives == 0 && m.LinkValid+m.LinkTest > 0 {
		return errors.New("link_negatives is 0 or missing: validation and test edges need their fixed negatives")
	}
	if m.NumNodes >= graph.MaxInt32Vertices {
		return fmt.Errorf("num_nodes is %d: link tasks hold int32 vertex ids", m.NumNodes)
	}
	return nil
}

// loadLink maps the link arrays the manifest names into d.Link.
func loadLink(l loader, m Manifest) error {
	if m.LinkTrain == 0 {
		return nil
	}
	s := &LinkSplit{Negatives: m.LinkNegatives}
	counts := map[string]int64{"train": m.LinkTrain, "valid": m.LinkValid, "test": m.LinkTest}
	for _, a := range s.linkArrays() {
		n := counts[a.of] * a.per
		data, shape, err := l.load(a.file)
		if err != nil {
			return err
		}
		p, ok := data.([]int32)
		if !ok || len(shape) != 2 || shape[0] != n || shape[1] != 2 {
			return fmt.Errorf("%s: %T of shape %s, want int32 [%d, 2] (%s in %s)", l.path(a.file), data, shapeText(shape), n, a.field, ManifestFile)
		}
		*a.pairs = p
	}
	l.d.Link = s
	return nil
}

// writeLink writes d's link arrays into dir.
func writeLink(write func(file string, data any, shape []int64) error, d *Dataset) error {
	if d.Link == nil {
		return nil
	}
	for _, a := range d.Link.linkArrays() {
		if err := write(a.file, *a.pairs, []int64{int64(Pairs(*a.pairs)), 2}); err != nil {
			return err
		}
	}
	return nil
}

// validateLink checks d's link task: every array holds whole pairs of
// vertex ids in range, the training edges are edges of the graph, the
// validation and test edges and every negative are not, and each negative
// has its positive's source.
func (d *Dataset) validateLink() error {
	s := d.Link
	if s == nil {
		return nil
	}
	g := d.Graph
	if g.Wide() {
		return fileErr(ManifestFile, "a link task needs int32 indices; this graph has %d vertices", g.NumNodes)
	}
	if Pairs(s.Train) == 0 {
		return fileErr(LinkTrainFile, "no training edges")
	}
	if s.Negatives < 0 || (s.Negatives == 0 && len(s.Valid)+len(s.Test) > 0) {
		return fileErr(ManifestFile, "link_negatives is %d; validation and test edges need at least one fixed negative each", s.Negatives)
	}
	for _, a := range s.linkArrays() {
		p := *a.pairs
		if len(p)%2 != 0 {
			return fileErr(a.file, "%d ids, not whole pairs", len(p))
		}
		for i, v := range p {
			if v < 0 || int64(v) >= g.NumNodes {
				return fileErr(a.file, "pair %d has vertex %d, want [0, %d)", i/2, v, g.NumNodes)
			}
		}
	}
	has := EdgeFinder(g)
	for i := 0; i < Pairs(s.Train); i++ {
		if u, v := s.Train[2*i], s.Train[2*i+1]; !has(u, v) {
			return fileErr(LinkTrainFile, "training edge %d (%d, %d) is not an edge of the graph", i, u, v)
		}
	}
	for _, a := range s.linkArrays()[1:] {
		p := *a.pairs
		for i := 0; i < Pairs(p); i++ {
			if u, v := p[2*i], p[2*i+1]; has(u, v) || has(v, u) {
				return fileErr(a.file, "pair %d (%d, %d) is an edge of the message-passing graph: held-out edges and negatives must not be", i, u, v)
			}
		}
	}
	for _, n := range []struct {
		file     string
		pos, neg []int32
	}{{LinkValidNegFile, s.Valid, s.ValidNeg}, {LinkTestNegFile, s.Test, s.TestNeg}} {
		for i := 0; i < Pairs(n.neg); i++ {
			if src := n.pos[2*(i/s.Negatives)]; n.neg[2*i] != src {
				return fileErr(n.file, "negative %d has source %d, but its positive %d has source %d", i, n.neg[2*i], i/s.Negatives, src)
			}
		}
	}
	return nil
}

// HasEdge reports whether v is among u's neighbours in g (int32
// indices), by a scan of u's row.
func HasEdge(g *graph.CSR, u, v int32) bool {
	for _, w := range g.Neighbors32(int64(u)) {
		if w == v {
			return true
		}
	}
	return false
}

// EdgeFinder is HasEdge for many look-ups: a binary search of u's row
// where every row of g is sorted ascending (as graph.FromEdges builds
// them; checked once, in one pass over the indices), else HasEdge.
func EdgeFinder(g *graph.CSR) func(u, v int32) bool {
	for r := int64(0); r < g.NumNodes; r++ {
		row := g.Neighbors32(r)
		for i := 1; i < len(row); i++ {
			if row[i] < row[i-1] {
				return func(u, v int32) bool { return HasEdge(g, u, v) }
			}
		}
	}
	return func(u, v int32) bool {
		_, found := slices.BinarySearch(g.Neighbors32(int64(u)), v)
		return found
	}
}

// linkInfo renders the link task's line of fanout info.
func linkInfo(i Info) string {
	if i.LinkTrain == 0 {
		return ""
	}
	return fmt.Sprintf("train %s  valid %s  test %s edges; %d fixed negatives per held-out edge",
		group(i.LinkTrain), group(i.LinkValid), group(i.LinkTest), i.LinkNegatives)
}
