package ogb

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/dataset/npz"
	"github.com/fanout-gnn/fanout/graph"
)

// importNPZ reads the ogbn-papers100M layout: raw/data.npz with edge_index
// [2, E], node_feat [N, D] and num_nodes_list [1]; labels from
// raw/node-label.npz (node_label [N, 1] or [N], NaN = unlabelled) or, when
// that is absent, raw/node-label.csv.gz.
func importNPZ(raw string, opt Options) (*dataset.Dataset, error) {
	a, err := npz.Open(filepath.Join(raw, "data.npz"))
	if err != nil {
		return nil, err
	}
	defer a.Close()
	d, err := readDataNPZ(a, opt)
	if err != nil {
		return nil, err
	}
	n := d.Graph.NumNodes
	if exists(filepath.Join(raw, "node-label.npz")) {
		la, err := npz.Open(filepath.Join(raw, "node-label.npz"))
		if err != nil {
			return nil, err
		}
		defer la.Close()
		d.Labels, d.NumClasses, err = labelsNPZ(la, n)
		return d, err
	}
	p, t, err := newParser(raw, "node-label", opt)
	if err != nil {
		return nil, fmt.Errorf("%s: no labels: %w", filepath.Join(raw, "node-label.npz"), err)
	}
	defer t.Close()
	d.Labels, d.NumClasses, err = p.labels(t.r, n)
	return d, err
}

// readDataNPZ reads the graph and features of data.npz.
func readDataNPZ(a *npz.Archive, opt Options) (*dataset.Dataset, error) {
	progress := func(done int64) {
		if opt.Progress != nil {
			opt.Progress(a.Base(), done, 3)
		}
	}
	progress(0)
	raw, _, err := a.Read("num_nodes_list")
	if err != nil {
		return nil, err
	}
	counts, err := npy.Int64s(raw)
	if err != nil || len(counts) != 1 || counts[0] < 0 {
		return nil, fmt.Errorf("%s: num_nodes_list must hold one vertex count (datasets of several graphs are not supported)", a.Name())
	}
	n := counts[0]
	if n >= graph.MaxInt32Vertices {
		return nil, fmt.Errorf("%s: %d vertices: too many for the importer (limit 2^31-1)", a.Name(), n)
	}
	src, dst, err := edgeIndex(a, n)
	if err != nil {
		return nil, err
	}
	progress(1)
	g, err := buildGraph(n, src, dst, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.Name(), err)
	}
	raw, shape, err := a.Read("node_feat")
	if err != nil {
		return nil, err
	}
	if len(shape) != 2 || shape[0] != n || shape[1] == 0 {
		return nil, fmt.Errorf("%s: node_feat has shape %s, want (%d, dim >= 1)", a.Name(), npy.ShapeString(shape), n)
	}
	feat, err := npy.Float32s(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: node_feat: %w", a.Name(), err)
	}
	progress(3)
	return &dataset.Dataset{Graph: g, Features: feat, FeatDim: int(shape[1])}, nil
}

// edgeIndex reads edge_index [2, E] (row 0 sources, row 1 destinations).
func edgeIndex(a *npz.Archive, n int64) (src, dst []int32, err error) {
	raw, shape, err := a.Read("edge_index")
	if err != nil {
		return nil, nil, err
	}
	if len(shape) != 2 || shape[0] != 2 {
		return nil, nil, fmt.Errorf("%s: edge_index has shape %s, want (2, edges)", a.Name(), npy.ShapeString(shape))
	}
	ids, err := npy.Int64s(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: edge_index: %w", a.Name(), err)
	}
	e := shape[1]
	src, dst = make([]int32, e), make([]int32, e)
	for k := int64(0); k < e; k++ {
		u, v := ids[k], ids[e+k]
		if u < 0 || u >= n || v < 0 || v >= n {
			return nil, nil, fmt.Errorf("%s: edge_index[:, %d] = (%d, %d) is out of range [0, %d)", a.Name(), k, u, v, n)
		}
		src[k], dst[k] = int32(u), int32(v)
	}
	return src, dst, nil
}

// labelsNPZ reads node_label ([N, 1] or [N], float with NaN for unlabelled
// vertices, or integer).
func labelsNPZ(a *npz.Archive, n int64) ([]int32, int, error) {
	raw, shape, err := a.Read("node_label")
	if err != nil {
		return nil, 0, err
	}
	if !(len(shape) == 1 && shape[0] == n) && !(len(shape) == 2 && shape[0] == n && shape[1] == 1) {
		return nil, 0, fmt.Errorf("%s: node_label has shape %s, want (%d, 1)", a.Name(), npy.ShapeString(shape), n)
	}
	vals, err := npy.Float64s(raw)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: node_label: %w", a.Name(), err)
	}
	labels := make([]int32, n)
	classes := int32(0)
	for i, v := range vals {
		switch {
		case math.IsNaN(v):
			labels[i] = -1
		case v != math.Trunc(v) || v < 0 || v >= dataset.MaxClasses:
			return nil, 0, fmt.Errorf("%s: node_label[%d] = %v is not a class id", a.Name(), i, v)
		default:
			labels[i] = int32(v)
			classes = max(classes, labels[i]+1)
		}
	}
	return labels, int(classes), nil
}
