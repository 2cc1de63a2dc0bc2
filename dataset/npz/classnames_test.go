package npz

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
)

// TestClassNamesBoundLabels: a label beyond class_names is refused, naming
// the vertex, the label and how many classes there are; within them, the
// dataset has as many classes as names, used or not.
func TestClassNamesBoundLabels(t *testing.T) {
	dir := t.TempDir()
	names := member{ClassNamesKey, stringsNPY("Case_Based", "Genetic_Algorithms", "Neural_Networks"), nil}
	oneHot := make([]float32, 6*5)
	for v, c := range []int{0, 1, 2, 0, 1, 4} {
		oneHot[v*5+c] = 1
	}
	for _, c := range []struct {
		name   string
		labels member
		want   string
	}{
		{"ids", member{"labels", []int64{0, 1, 2, 0, 1, 100}, []int64{6}}, "vertex 5 has label 100, beyond class_names, which names 3 classes (labels 0 to 2)"},
		{"one-hot", member{"labels", oneHot, []int64{6, 5}}, "vertex 5 has label 4, beyond class_names, which names 3 classes"},
	} {
		path := writeNPZ(t, dir, c.name+".npz", append(without(tinyArchive(), "labels"), names, c.labels))
		// A split the archive can give: without the check, it imports.
		d, err := Import(path, dataset.SplitOptions{Seed: 7, TrainPerClass: 1, Valid: 1, Test: 1})
		if err == nil {
			t.Errorf("%s: a dataset of %d classes, want an error", c.name, d.NumClasses)
			continue
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want the file and %q", c.name, err, c.want)
		}
	}

	four := member{ClassNamesKey, stringsNPY("a", "b", "c", "unused"), nil}
	d, err := Import(writeNPZ(t, dir, "four.npz", append(tinyArchive(), four)), smallSplit)
	if err != nil {
		t.Fatal(err)
	}
	if d.NumClasses != 4 {
		t.Errorf("labels 0-2 with four class names: %d classes, want 4", d.NumClasses)
	}

	bad := member{ClassNamesKey, []int64{1, 2, 3, 4}, []int64{2, 2}}
	path := writeNPZ(t, dir, "shape.npz", append(tinyArchive(), bad))
	if _, err := Import(path, smallSplit); err == nil || !strings.Contains(err.Error(), "class_names has shape (2, 2), want (classes,)") {
		t.Errorf("2-D class_names: %v", err)
	}
}

// TestClassNamesCRCChecked: class_names is read to its end, so a damaged
// member is found although only its header is used.
func TestClassNamesCRCChecked(t *testing.T) {
	names := member{ClassNamesKey, stringsNPY("alpha", "beta", "gamma"), nil}
	b := storedBytes(t, append(tinyArchive(), names))
	at := strings.LastIndex(string(b), "g\x00\x00\x00a\x00\x00\x00m")
	if at < 0 {
		t.Fatal("class name bytes not found in the stored archive")
	}
	b[at] = 'G'
	a, err := NewArchive(bytes.NewReader(b), int64(len(b)), "names.npz")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Shape(ClassNamesKey); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged class_names: %v", err)
	}
}
