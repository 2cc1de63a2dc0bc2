package ogb

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/torchzip"
	"github.com/fanout-gnn/fanout/graph"
)

// Link-prediction datasets (ogbl-*) keep their split as torch.save files,
// split/<name>/{train,valid,test}.pt, each a dict of tensors: 'edge'
// [E, 2] (ogbl-collab, -ppa, -ddi) or 'source_node' and 'target_node' [E]
// (ogbl-citation2) for the positives, and for validation and test
// 'edge_neg' [M, 2] or 'target_node_neg' [E, K] for the negatives. Other
// keys ('weight', 'year') are not used.

// IsLink reports whether src (an OGB dataset folder, or its raw folder)
// holds a link-prediction split: split/<name>/train.pt.
func IsLink(src string) bool {
	root, _, err := locate(src)
	if err != nil {
		return false
	}
	found, _ := filepath.Glob(filepath.Join(root, "split", "*", "train.pt"))
	return len(found) > 0
}

// ImportLink reads an OGB link-prediction dataset folder: the graph from
// raw/edge.csv.gz (OGB's training graph, made undirected: opt.Symmetrize
// is implied), the features from raw/node-feat.csv.gz (without it, one
// feature of 1 per vertex), and the link task from the split's .pt files.
// The training edges are stored once per undirected edge, self loops and
// repeats dropped; a validation or test edge that is also a training edge
// (ogbl-collab repeats collaborations across years), or that has a
// negative that is, is dropped with its negatives (Source counts them). Negatives are stored K per positive with the positive's source:
// target_node_neg's K columns, or for edge_neg's shared pool K = M/E of
// the pool's destinations in order (the smaller K of validation and test
// for both). The dataset has no node labels: its node task is one
// placeholder class on every vertex, all in the training split.
func ImportLink(src string, opt Options) (*dataset.Dataset, error) {
	root, raw, err := locate(src)
	if err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	opt.Symmetrize = true
	n, numEdges, err := readCounts(raw, opt)
	if err != nil {
		return nil, err
	}
	d := &dataset.Dataset{}
	if d.Graph, err = readGraph(raw, n, numEdges, opt); err != nil {
		return nil, err
	}
	if d.Features, d.FeatDim, err = linkFeatures(raw, n, opt); err != nil {
		return nil, err
	}
	dir, err := splitDir(root, opt.Split)
	if err != nil {
		return nil, err
	}
	var dropped int
	if d.Link, dropped, err = readLinkSplit(dir, d.Graph); err != nil {
		return nil, err
	}
	d.Labels = make([]int32, n)
	d.NumClasses = 1
	d.Train = make([]int64, n)
	for v := range d.Train {
		d.Train[v] = int64(v)
	}
	d.Name = opt.name(root)
	d.Symmetric = true
	d.Preprocessing = dataset.GraphSteps(graphOptions(opt))
	d.Source = fmt.Sprintf("ogb %s (link prediction, no node labels; %d held-out edges dropped: training edges or with a negative that is)", d.Name, dropped)
	return d, nil
}

// linkFeatures reads raw/node-feat, or gives every vertex one feature of 1.
func linkFeatures(raw string, n int64, opt Options) ([]float32, int, error) {
	if !hasText(raw, "node-feat") {
		ones := make([]float32, n)
		for i := range ones {
			ones[i] = 1
		}
		return ones, 1, nil
	}
	p, t, err := newParser(raw, "node-feat", opt)
	if err != nil {
		return nil, 0, err
	}
	defer t.Close()
	return p.features(t.r, n)
}

// heldOut is a validation or test split as read: positives and their
// negatives, k per positive.
type heldOut struct {
	file     string
	pos, neg []int32
	k        int
}

// readLinkSplit reads dir's train.pt, valid.pt and test.pt into a link
// task over g.
func readLinkSplit(dir string, g *graph.CSR) (s *dataset.LinkSplit, dropped int, err error) {
	n := g.NumNodes
	trainFile := filepath.Join(dir, "train.pt")
	m, err := torchzip.Read(trainFile, 0)
	if err != nil {
		return nil, 0, err
	}
	train, err := positives(trainFile, m, n)
	if err != nil {
		return nil, 0, err
	}
	s = &dataset.LinkSplit{Train: undirected(train)}
	if dataset.Pairs(s.Train) == 0 {
		return nil, 0, fmt.Errorf("%s: no training edges (besides self loops)", trainFile)
	}
	var held [2]heldOut
	for i, part := range []string{"valid", "test"} {
		h := heldOut{file: filepath.Join(dir, part+".pt")}
		if m, err = torchzip.Read(h.file, 0); err != nil {
			return nil, 0, err
		}
		if h.pos, err = positives(h.file, m, n); err != nil {
			return nil, 0, err
		}
		if h.neg, h.k, err = negatives(h.file, m, h.pos, n); err != nil {
			return nil, 0, err
		}
		held[i] = h
	}
	s.Negatives = min(held[0].k, held[1].k)
	has := dataset.EdgeFinder(g)
	for i := range held {
		d, err := held[i].keep(s.Negatives, has)
		if err != nil {
			return nil, 0, err
		}
		dropped += d
	}
	s.Valid, s.ValidNeg = held[0].pos, held[0].neg
	s.Test, s.TestNeg = held[1].pos, held[1].neg
	return s, dropped, nil
}

// keep trims h to k negatives per positive and drops the positives that
// are edges of the graph, or that have a negative that is, with their
// negatives; it returns how many it dropped.
func (h *heldOut) keep(k int, has func(u, v int32) bool) (int, error) {
	edge := func(p []int32, i int) bool { return has(p[2*i], p[2*i+1]) || has(p[2*i+1], p[2*i]) }
	var pos, neg []int32
	for i := 0; i < dataset.Pairs(h.pos); i++ {
		ok := !edge(h.pos, i)
		for j := 0; ok && j < k; j++ {
			ok = !edge(h.neg, i*h.k+j)
		}
		if ok {
			pos = append(pos, h.pos[2*i:2*i+2]...)
			neg = append(neg, h.neg[2*i*h.k:2*(i*h.k+k)]...)
		}
	}
	if len(pos) == 0 {
		return 0, fmt.Errorf("%s: every one of the %d positives, or one of its negatives, is an edge of the training graph", h.file, dataset.Pairs(h.pos))
	}
	dropped := dataset.Pairs(h.pos) - dataset.Pairs(pos)
	h.pos, h.neg = pos, neg
	return dropped, nil
}

// undirected keeps each undirected edge of pairs once (its first
// occurrence, in the order given) and drops self loops; it sorts instead
// of hashing, as ogbl-citation2's 30 million edges would make a map large.
func undirected(pairs []int32) []int32 {
	key := func(i int32) uint64 {
		u, v := pairs[2*i], pairs[2*i+1]
		return uint64(min(u, v))<<32 | uint64(max(u, v))
	}
	order := make([]int32, len(pairs)/2)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Or(cmp.Compare(key(a), key(b)), cmp.Compare(a, b)) })
	keep := make([]bool, len(order))
	for r, i := range order {
		keep[i] = pairs[2*i] != pairs[2*i+1] && (r == 0 || key(order[r-1]) != key(i))
	}
	out := make([]int32, 0, len(pairs))
	for i, k := range keep {
		if k {
			out = append(out, pairs[2*i:2*i+2]...)
		}
	}
	return out
}
