package ogb

import (
	"fmt"
	"strings"

	"github.com/fanout-gnn/fanout/dataset/torchzip"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// positives reads a split file's positive pairs: 'edge' [E, 2], or
// 'source_node' and 'target_node' [E].
func positives(file string, m map[string]*torchzip.Tensor, n int64) ([]int32, error) {
	if e, ok := m["edge"]; ok {
		if err := checkShape(file, "edge", e, -1, 2); err != nil {
			return nil, err
		}
		return vertexIDs(file, "edge", e.Ints, n)
	}
	src, ok1 := m["source_node"]
	dst, ok2 := m["target_node"]
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%s: no 'edge' nor 'source_node' and 'target_node' tensors (have %s)", file, quote.Quote(strings.Join(torchzip.Keys(m), ", ")))
	}
	if err := checkShape(file, "source_node", src, -1); err != nil {
		return nil, err
	}
	if err := checkShape(file, "target_node", dst, src.Shape[0]); err != nil {
		return nil, err
	}
	pairs := make([]int64, 0, 2*len(src.Ints))
	for i := range src.Ints {
		pairs = append(pairs, src.Ints[i], dst.Ints[i])
	}
	return vertexIDs(file, "source_node and target_node", pairs, n)
}

// negatives reads a validation or test file's negatives for pos, k per
// positive with the positive's source: 'target_node_neg' [E, K], or the
// destinations of the pool 'edge_neg' [M, 2], K = M/E.
func negatives(file string, m map[string]*torchzip.Tensor, pos []int32, n int64) ([]int32, int, error) {
	e := int64(len(pos) / 2)
	var dst []int32
	k := int64(0)
	if t, ok := m["target_node_neg"]; ok {
		if err := checkShape(file, "target_node_neg", t, e, -1); err != nil {
			return nil, 0, err
		}
		k = t.Shape[1]
		ids, err := vertexIDs(file, "target_node_neg", t.Ints, n)
		if err != nil {
			return nil, 0, err
		}
		dst = ids
	} else if t, ok := m["edge_neg"]; ok {
		if err := checkShape(file, "edge_neg", t, -1, 2); err != nil {
			return nil, 0, err
		}
		if k = t.Shape[0] / max(e, 1); k == 0 {
			return nil, 0, fmt.Errorf("%s: edge_neg holds %d pairs, fewer than the %d positives", file, t.Shape[0], e)
		}
		ids, err := vertexIDs(file, "edge_neg", t.Ints[:2*e*k], n)
		if err != nil {
			return nil, 0, err
		}
		for i := 1; i < len(ids); i += 2 {
			dst = append(dst, ids[i])
		}
	} else {
		return nil, 0, fmt.Errorf("%s: no negatives: want 'edge_neg' or 'target_node_neg' (have %s)", file, quote.Quote(strings.Join(torchzip.Keys(m), ", ")))
	}
	if k == 0 {
		return nil, 0, fmt.Errorf("%s: no negatives per positive", file)
	}
	neg := make([]int32, 0, 2*len(dst))
	for i, w := range dst {
		neg = append(neg, pos[2*(int64(i)/k)], w)
	}
	return neg, int(k), nil
}

// checkShape checks an integer tensor's shape; -1 matches any size.
func checkShape(file, key string, t *torchzip.Tensor, shape ...int64) error {
	ok := len(t.Shape) == len(shape) && !t.IsFloat()
	for i := 0; ok && i < len(shape); i++ {
		ok = shape[i] < 0 || t.Shape[i] == shape[i]
	}
	if !ok {
		want := strings.ReplaceAll(strings.Trim(fmt.Sprint(shape), "[]"), "-1", "*")
		return fmt.Errorf("%s: %s is a %s tensor of shape %v, want integers of shape [%s]", file, key, t.DType, t.Shape, want)
	}
	return nil
}

// vertexIDs converts ids to int32, checking each is a vertex.
func vertexIDs(file, key string, ids []int64, n int64) ([]int32, error) {
	out := make([]int32, len(ids))
	for i, v := range ids {
		if v < 0 || v >= n {
			return nil, fmt.Errorf("%s: %s element %d is vertex %d, want [0, %d)", file, key, i, v, n)
		}
		out[i] = int32(v)
	}
	return out, nil
}
