package ogbtest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// MAG describes the folder WriteMAG writes in OGB's typed raw layout, as
// ogbn-mag ships it: Papers papers (the target, 3 features each: v, -v,
// 0.5; label v%Classes, the last paper unlabelled), Authors authors,
// Institutions institutions and Fields fields of study, without features.
// Relations (edge.csv.gz and num-edge-list.csv.gz each): author a writes
// papers a and a+1 (mod Papers), and a twice more (a repeat); paper p
// cites p+1 and p+2 (mod Papers), and paper 0 itself (a self loop);
// author a is affiliated with institution a%Institutions; paper p has
// topic p%Fields. Split time: papers 0 and 1 train, 2 validates, 3 tests.
type MAG struct {
	Papers, Authors, Institutions, Fields int
	Classes                               int
}

// Edges are the relations' edges as WriteMAG writes them, by relation
// folder name (src___rel___dst): (source, destination) pairs.
func (m MAG) Edges() map[string][][2]int {
	out := map[string][][2]int{}
	add := func(rel string, s, d int) { out[rel] = append(out[rel], [2]int{s, d}) }
	for a := range m.Authors {
		add("author___writes___paper", a, a%m.Papers)
		add("author___writes___paper", a, (a+1)%m.Papers)
		add("author___affiliated_with___institution", a, a%m.Institutions)
	}
	add("author___writes___paper", 0, 0)
	for p := range m.Papers {
		add("paper___cites___paper", p, (p+1)%m.Papers)
		add("paper___cites___paper", p, (p+2)%m.Papers)
		add("paper___has_topic___field_of_study", p, p%m.Fields)
	}
	add("paper___cites___paper", 0, 0)
	return out
}

// WriteMAG writes the folder under dir (raw/ and split/time/) and returns
// dir.
func WriteMAG(t testing.TB, dir string, m MAG) string {
	t.Helper()
	raw := filepath.Join(dir, "raw")
	writeGz(t, filepath.Join(raw, "num-node-dict.csv.gz"),
		fmt.Sprintf("author,field_of_study,institution,paper\n%d,%d,%d,%d\n", m.Authors, m.Fields, m.Institutions, m.Papers))
	var triplets strings.Builder
	for rel, edges := range m.Edges() {
		fmt.Fprintln(&triplets, strings.ReplaceAll(rel, "___", ","))
		var text strings.Builder
		for _, e := range edges {
			fmt.Fprintf(&text, "%d,%d\n", e[0], e[1])
		}
		writeGz(t, filepath.Join(raw, "relations", rel, "edge.csv.gz"), text.String())
		writeGz(t, filepath.Join(raw, "relations", rel, "num-edge-list.csv.gz"), fmt.Sprintf("%d\n", len(edges)))
	}
	writeGz(t, filepath.Join(raw, "triplet-type-list.csv.gz"), triplets.String())
	var feat, label strings.Builder
	for p := range m.Papers {
		fmt.Fprintf(&feat, "%d,%d,0.5\n", p, -p)
		if p < m.Papers-1 {
			fmt.Fprintf(&label, "%d\n", p%m.Classes)
		} else {
			label.WriteString("\n")
		}
	}
	writeGz(t, filepath.Join(raw, "node-feat", "paper", "node-feat.csv.gz"), feat.String())
	writeGz(t, filepath.Join(raw, "node-label", "paper", "node-label.csv.gz"), label.String())
	writeGz(t, filepath.Join(raw, "nodetype-has-label.csv.gz"), "author,field_of_study,institution,paper\nFalse,False,False,True\n")
	split := filepath.Join(dir, "split", "time")
	writeGz(t, filepath.Join(split, "nodetype-has-split.csv.gz"), "author,field_of_study,institution,paper\nFalse,False,False,True\n")
	for name, ids := range map[string]string{"train": "0\n1\n", "valid": "2\n", "test": "3\n"} {
		writeGz(t, filepath.Join(split, "paper", name+".csv.gz"), ids)
	}
	return dir
}
