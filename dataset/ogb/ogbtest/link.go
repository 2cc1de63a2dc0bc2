// Package ogbtest writes small Open Graph Benchmark folders for tests.
package ogbtest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/torchzip"
)

// Link describes the link-prediction folder WriteLink writes: Nodes
// vertices on a ring, each linked to the vertices 1, 2 and 5 further on
// (3·Nodes undirected edges, edge i of vertex v numbered 3v+i); every
// tenth edge goes to validation, the next tenth to test, the rest to
// training (raw/edge.csv.gz). Negatives of a held-out edge (u, v) are
// (u, u+30+7j), never an edge.
type Link struct {
	Nodes     int
	Negatives int
	// Citation writes ogbl-citation2's keys (source_node, target_node,
	// target_node_neg [E, K]); otherwise ogbl-collab's (edge, edge_neg
	// [E·K, 2], a pool in the positives' order).
	Citation bool
}

// Counts are what importing the folder gives: undirected training edges
// (train.pt also lists one self loop and one repeat, which are dropped)
// and held-out positives (valid.pt also lists a training edge, which is
// dropped).
func (l Link) Counts() (train, valid, test int) {
	m := 3 * l.Nodes
	for i := range m {
		switch i % 10 {
		case 0:
			valid++
		case 1:
			test++
		default:
			train++
		}
	}
	return train, valid, test
}

// WriteLink writes the folder under dir (raw/ and split/random/) and
// returns dir.
func WriteLink(t testing.TB, dir string, l Link) string {
	t.Helper()
	var train, sets [3][]int64
	for v := range l.Nodes {
		for i, d := range []int{1, 2, 5} {
			e := []int64{int64(v), int64((v + d) % l.Nodes)}
			sets[min((3*v+i)%10, 2)] = append(sets[min((3*v+i)%10, 2)], e...)
		}
	}
	valid, test := sets[0], sets[1]
	train[0] = sets[2]
	var edges, feat strings.Builder
	for i := 0; i < len(train[0]); i += 2 {
		fmt.Fprintf(&edges, "%d,%d\n", train[0][i], train[0][i+1])
	}
	for v := range l.Nodes {
		fmt.Fprintf(&feat, "%d,%d,%g,1\n", v%3, v%5, float64(v%7)/7)
	}
	writeGz(t, filepath.Join(dir, "raw", "num-node-list.csv.gz"), fmt.Sprintf("%d\n", l.Nodes))
	writeGz(t, filepath.Join(dir, "raw", "num-edge-list.csv.gz"), fmt.Sprintf("%d\n", len(train[0])/2))
	writeGz(t, filepath.Join(dir, "raw", "edge.csv.gz"), edges.String())
	writeGz(t, filepath.Join(dir, "raw", "node-feat.csv.gz"), feat.String())
	trainPairs := append(append([]int64{}, train[0]...), 7, 7, train[0][3], train[0][2]) // a self loop, a repeat
	validPairs := append(append([]int64{}, valid...), train[0][1], train[0][0])          // a training edge
	split := filepath.Join(dir, "split", "random")
	if err := os.MkdirAll(split, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, pairs := range map[string][]int64{"train": trainPairs, "valid": validPairs, "test": test} {
		m := l.tensors(pairs, name != "train")
		if err := torchzip.Write(filepath.Join(split, name+".pt"), m); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tensors is a split file's dict for pairs, with negatives when neg.
func (l Link) tensors(pairs []int64, neg bool) map[string]*torchzip.Tensor {
	e := int64(len(pairs) / 2)
	var dst []int64
	for i := int64(0); neg && i < e; i++ {
		for j := range l.Negatives {
			dst = append(dst, (pairs[2*i]+30+7*int64(j))%int64(l.Nodes))
		}
	}
	m := map[string]*torchzip.Tensor{}
	if !l.Citation {
		m["edge"] = &torchzip.Tensor{Shape: []int64{e, 2}, Ints: pairs}
		if neg {
			pool := make([]int64, 0, 2*len(dst))
			for i, w := range dst {
				pool = append(pool, pairs[2*(i/l.Negatives)], w)
			}
			m["edge_neg"] = &torchzip.Tensor{Shape: []int64{int64(len(dst)), 2}, Ints: pool}
		}
		return m
	}
	src, tgt := make([]int64, e), make([]int64, e)
	for i := range src {
		src[i], tgt[i] = pairs[2*i], pairs[2*i+1]
	}
	m["source_node"] = &torchzip.Tensor{Shape: []int64{e}, Ints: src}
	m["target_node"] = &torchzip.Tensor{Shape: []int64{e}, Ints: tgt}
	if neg {
		m["target_node_neg"] = &torchzip.Tensor{Shape: []int64{e, int64(l.Negatives)}, Ints: dst}
	}
	return m
}

// Gzip compresses s.
func Gzip(t testing.TB, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeGz writes text gzip-compressed to path.
func writeGz(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, Gzip(t, text), 0o644); err != nil {
		t.Fatal(err)
	}
}
