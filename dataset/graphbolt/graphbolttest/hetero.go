package graphbolttest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/graphbolt"
)

// Hetero is a small typed graph in GraphBolt's on-disk layout: Papers
// papers (features v and v/2; label v%3), Authors authors without
// features; author a writes papers a and a+1 (mod Papers), in CSV under
// the edge type author:writes:paper; paper p cites p+1 (mod Papers), and
// paper 0 cites itself, in a [2, edges] .npy under paper:cites:paper. The
// task's seeds are papers: 0 to 3 train, 4 and 5 validate, 6 and 7 test,
// with their labels. Papers must be at least 8.
type Hetero struct {
	Papers, Authors int64
}

// Writes is the edges author:writes:paper as Write writes them.
func (h Hetero) Writes() (src, dst []int64) {
	for a := range h.Authors {
		src, dst = append(src, a, a), append(dst, a%h.Papers, (a+1)%h.Papers)
	}
	return src, dst
}

// Cites is the edges paper:cites:paper as Write writes them.
func (h Hetero) Cites() (src, dst []int64) {
	for p := range h.Papers {
		src, dst = append(src, p), append(dst, (p+1)%h.Papers)
	}
	return append(src, 0), append(dst, 0)
}

// Write writes the files and metadata.yaml into a new directory.
func (h Hetero) Write(t testing.TB) string {
	t.Helper()
	dir, save := newLayout(t)
	var writes strings.Builder
	src, dst := h.Writes()
	for i := range src {
		fmt.Fprintf(&writes, "%d,%d\n", src[i], dst[i])
	}
	WriteFile(t, dir, "edges/writes.csv", writes.String())
	src, dst = h.Cites()
	save("edges/cites.npy", append(src, dst...), 2, int64(len(src)))
	feat := make([]float32, 0, 2*h.Papers)
	for v := range h.Papers {
		feat = append(feat, float32(v), float32(v)/2)
	}
	save("data/paper-feat.npy", feat, h.Papers, 2)
	sets := ""
	for _, s := range []struct {
		name  string
		seeds []int64
	}{{"train", []int64{0, 1, 2, 3}}, {"validation", []int64{4, 5}}, {"test", []int64{6, 7}}} {
		labels := make([]int64, len(s.seeds))
		for i, v := range s.seeds {
			labels[i] = v % 3
		}
		save("set/"+s.name+"-seeds.npy", s.seeds, int64(len(s.seeds)))
		save("set/"+s.name+"-labels.npy", labels, int64(len(labels)))
		sets += fmt.Sprintf("    %s_set:\n      - type: paper\n        data:\n          - name: seeds\n            format: numpy\n            path: set/%s-seeds.npy\n"+
			"          - name: labels\n            format: numpy\n            path: set/%s-labels.npy\n", s.name, s.name, s.name)
	}
	WriteFile(t, dir, graphbolt.MetadataFile, fmt.Sprintf(`dataset_name: graphbolt_hetero
graph:
  nodes:
    - type: paper
      num: %d
    - type: author
      num: %d
  edges:
    - type: author:writes:paper
      format: csv
      path: edges/writes.csv
    - type: paper:cites:paper
      format: numpy
      path: edges/cites.npy
feature_data:
  - domain: node
    type: paper
    name: feat
    format: numpy
    in_memory: true
    path: data/paper-feat.npy
tasks:
  - name: node_classification
    num_classes: 3
%s`, h.Papers, h.Authors, sets))
	return dir
}
