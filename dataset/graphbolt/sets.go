package graphbolt

import (
	"fmt"
	"slices"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// Names of a set's arrays: the seed vertices (seed_nodes in older
// layouts) and their labels.
const (
	seedsName    = "seeds"
	oldSeedsName = "seed_nodes"
	labelsName   = "labels"
)

// seedType is the vertices a task's seeds are: n of type typ ("" for a
// graph of one type), which the metadata describes as says.
type seedType struct {
	n    int64
	typ  string
	says string // "graph.nodes[0].num is 40"
}

// taskSets reads the labels and the train, validation and test sets of
// task t (the ti-th), of the vertices v, into d.
func taskSets(dir string, m *metadata, t *task, ti int, d *dataset.Dataset, v seedType) error {
	labels, fromFeature, err := vertexLabels(dir, m, v)
	if err != nil {
		return err
	}
	for _, s := range []struct {
		name  string
		parts []tvtSet
		dst   *[]int64
	}{
		{"train_set", t.Train, &d.Train}, {"validation_set", t.Validation, &d.Valid}, {"test_set", t.Test, &d.Test},
	} {
		field := fmt.Sprintf("tasks[%d].%s", ti, s.name)
		switch {
		case len(s.parts) == 0 && s.name == "train_set":
			return fmt.Errorf("%s: %s is missing: training needs seeds", MetadataFile, field)
		case len(s.parts) == 0:
			continue
		case (len(s.parts) > 1 || s.parts[0].Type != "") && v.typ == "":
			return fmt.Errorf("%s: %s has %d typed parts: only homogeneous sets (one part, untyped) can be imported", MetadataFile, field, len(s.parts))
		case len(s.parts) > 1 || s.parts[0].Type != v.typ:
			return fmt.Errorf("%s: %s has %d parts, the first of type %s: a node classification task's seeds are the target's, %s, in one part",
				MetadataFile, field, len(s.parts), quote.Quote(s.parts[0].Type), v.typ)
		}
		if *s.dst, err = readSet(dir, field+"[0]", s.parts[0], v, labels, fromFeature); err != nil {
			return err
		}
	}
	if err := checkSeeds(ti, d, labels); err != nil {
		return err
	}
	classes := t.NumClasses
	top := slices.Max(labels)
	if top < 0 {
		return fmt.Errorf("%s: no labels: neither a node feature %q nor labels in tasks[%d]'s sets", MetadataFile, labelFeature, ti)
	}
	if classes == 0 {
		classes = int(top) + 1
	}
	if int(top) >= classes || classes > dataset.MaxClasses {
		return fmt.Errorf("%s: tasks[%d].num_classes is %d, but a label is %d (at most %d classes)", MetadataFile, ti, classes, top, dataset.MaxClasses)
	}
	d.Labels, d.NumClasses = labels, classes
	return nil
}

// vertexLabels reads the node feature "label" of the vertices v where
// there is one: a class id per vertex (-1 unlabelled); otherwise every
// vertex starts unlabelled.
func vertexLabels(dir string, m *metadata, v seedType) ([]int32, bool, error) {
	n := v.n
	labels := make([]int32, n)
	i := slices.IndexFunc(m.Features, func(f featureData) bool {
		return f.Domain == "node" && f.Name == labelFeature && (v.typ == "" || f.Type == v.typ)
	})
	if i < 0 {
		for v := range labels {
			labels[v] = -1
		}
		return labels, false, nil
	}
	f := m.Features[i]
	e := entry{field: fmt.Sprintf("feature_data[%d] (%s)", i, quote.Quote(labelFeature)), format: f.Format, path: f.Path}
	ints, _, err := readInts(dir, e, func(shape []int64) string {
		if len(shape) != 1 || shape[0] != n {
			return fmt.Sprintf("[%d], a class id per vertex", n)
		}
		return ""
	})
	if err != nil {
		return nil, false, err
	}
	for v, c := range ints {
		if c < -1 || c >= dataset.MaxClasses {
			return nil, false, fmt.Errorf("%s (%s): element %d: label %d is outside [0, %d) (-1: unlabelled)", f.Path, e.field, v, c, dataset.MaxClasses)
		}
		labels[v] = int32(c)
	}
	return labels, true, nil
}

// readSet reads one set's seeds (of the vertices at) and, where given,
// their labels: into labels, or checked against them where the vertices'
// labels came from a node feature.
func readSet(dir, field string, s tvtSet, at seedType, labels []int32, fromFeature bool) ([]int64, error) {
	var seeds, setLabels []int64
	var seedsAt, labelsAt entry
	for j, a := range s.Data {
		e := entry{field: fmt.Sprintf("%s.data[%d] (%s)", field, j, quote.Quote(a.Name)), format: a.Format, path: a.Path}
		var err error
		switch {
		case a.Name == seedsName || a.Name == oldSeedsName:
			seeds, _, err = readInts(dir, e, func(shape []int64) string {
				if len(shape) != 1 {
					return "[seeds], one vertex per item: only node classification sets can be imported"
				}
				return ""
			})
			seedsAt = e
		case a.Name == labelsName:
			setLabels, _, err = readInts(dir, e, func(shape []int64) string {
				if len(shape) != 1 {
					return "[seeds], a class id per seed"
				}
				return ""
			})
			labelsAt = e
		}
		if err != nil {
			return nil, err
		}
	}
	if seedsAt.field == "" {
		return nil, fmt.Errorf("%s: %s has no seeds array (data name seeds)", MetadataFile, field)
	}
	if labelsAt.field != "" && len(setLabels) != len(seeds) {
		return nil, fmt.Errorf("%s: %s has %d labels for %d seeds", MetadataFile, labelsAt.field, len(setLabels), len(seeds))
	}
	for i, v := range seeds {
		if v < 0 || v >= at.n {
			return nil, fmt.Errorf("%s (%s): element %d: %d is not a vertex (%s)", seedsAt.path, seedsAt.field, i, v, at.says)
		}
		if labelsAt.field == "" {
			continue
		}
		c := setLabels[i]
		switch {
		case c < 0 || c >= dataset.MaxClasses:
			return nil, fmt.Errorf("%s (%s): element %d: label %d is outside [0, %d)", labelsAt.path, labelsAt.field, i, c, dataset.MaxClasses)
		case fromFeature && int64(labels[v]) != c:
			return nil, fmt.Errorf("%s (%s): element %d: vertex %d has label %d here but %d in the node feature %q",
				labelsAt.path, labelsAt.field, i, v, c, labels[v], labelFeature)
		case labels[v] >= 0 && int64(labels[v]) != c:
			return nil, fmt.Errorf("%s (%s): element %d: vertex %d has label %d here but %d in another set", labelsAt.path, labelsAt.field, i, v, c, labels[v])
		}
		labels[v] = int32(c)
	}
	return seeds, nil
}

// checkSeeds checks that every seed of task ti's sets has a label (from
// its set or the node feature) and is in one set, once.
func checkSeeds(ti int, d *dataset.Dataset, labels []int32) error {
	in := map[int64]string{}
	for _, s := range []struct {
		name string
		ids  []int64
	}{{"train_set", d.Train}, {"validation_set", d.Valid}, {"test_set", d.Test}} {
		for i, v := range s.ids {
			field := fmt.Sprintf("tasks[%d].%s[0]", ti, s.name)
			if labels[v] < 0 {
				return fmt.Errorf("%s: %s: seed %d, vertex %d, has no label (neither its set's labels nor a node feature %s give one)",
					MetadataFile, field, i, v, quote.Quote(labelFeature))
			}
			if other, ok := in[v]; ok {
				return fmt.Errorf("%s: %s: seed %d, vertex %d, is a seed of %s too", MetadataFile, field, i, v, other)
			}
			in[v] = field
		}
	}
	return nil
}
