package edgelist

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// maxClasses bounds class ids, as the other importers do.
const maxClasses = dataset.MaxClasses

// nodes is what the node table gives: one row per vertex, in dense id
// order.
type nodes struct {
	ids     *idMap
	feat    []float32 // [n, dim] row-major
	dim     int
	labels  []int32 // [n], -1 = unlabelled
	classes int
	split   [3][]int64 // train, valid, test, from the split column(s)
}

// nodeColumns are the node table's columns that readNodes uses.
type nodeColumns struct {
	id, label int   // label -1: a table without labels
	split     []int // one column of split names, or three of train, valid and test masks; none
	feat      []int // feature columns, in order
	ignore    []int // columns that are not features (another type's label and split columns)
}

// tableSpec is what readNodes reads of a node table: the options' node
// table, or one type's table of a typed import.
type tableSpec struct {
	file, id string
	label    string   // the labels' column; "": a type without labels
	split    string   // the split's column(s); "": none
	features []string // feature columns; nil: every other numeric column of row 1
	// some makes features optional: the columns of features the table has
	// (all of them, or none for a type without features).
	some bool
	// ignore names columns that are never features where present.
	ignore []string
	// bare lets a table have no features (a typed import's types).
	bare bool
}

// specOf is the node table of o.
func specOf(o Options) tableSpec {
	return tableSpec{file: o.Nodes, id: o.ID, label: o.Label, split: o.Split, features: o.Features}
}

// readNodes reads the node table s describes.
func readNodes(s tableSpec) (_ *nodes, err error) {
	if isNPY(s.file) {
		return readNPYNodes(s)
	}
	t, err := openTable(s.file)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, t.close()) }()
	cols, err := nodeColumnsOf(t, s)
	if err != nil {
		return nil, err
	}
	nd := &nodes{ids: newIDMap()}
	var row []float64
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if nd.ids.len() == 0 && s.features == nil {
			if cols.feat, err = numericColumns(t, cols, s.bare); err != nil {
				return nil, err
			}
		}
		if row, err = nd.add(t, cols, row[:0]); err != nil {
			return nil, err
		}
	}
	if nd.ids.len() == 0 {
		return nil, fmt.Errorf("%s: no rows: the node table lists every vertex", t.path())
	}
	nd.ids.done()
	for _, c := range nd.labels {
		nd.classes = max(nd.classes, int(c)+1)
	}
	if nd.classes == 0 && cols.label >= 0 {
		return nil, fmt.Errorf("%s: column %s: every vertex is unlabelled", t.path(), quote.Quote(s.label))
	}
	return nd, nil
}

// nodeColumnsOf finds the id, label, split, ignored and named feature
// columns.
func nodeColumnsOf(t table, s tableSpec) (nodeColumns, error) {
	c := nodeColumns{label: -1}
	var err error
	if c.id, err = column(t, s.id, "--id"); err != nil {
		return c, err
	}
	if s.label != "" {
		if c.label, err = column(t, s.label, "--label"); err != nil {
			return c, err
		}
	}
	for _, name := range s.ignore {
		if i := slices.Index(t.columns(), name); i >= 0 {
			c.ignore = append(c.ignore, i)
		}
	}
	if s.split != "" {
		names := strings.Split(s.split, ",")
		if len(names) != 1 && len(names) != 3 {
			return c, fmt.Errorf("--split %s: want one column (train, valid, test) or three (train, valid and test masks)", quote.Quote(s.split))
		}
		for _, name := range names {
			i, err := column(t, name, "--split")
			if err != nil {
				return c, err
			}
			c.split = append(c.split, i)
		}
	}
	features, err := presentFeatures(t, s)
	if err != nil {
		return c, err
	}
	for _, name := range features {
		i, err := column(t, name, "--features")
		if err != nil {
			return c, err
		}
		if c.other(i) {
			return c, fmt.Errorf("%s: --features %s: the column is the vertex's id, label or split", t.path(), quote.Quote(name))
		}
		c.feat = append(c.feat, i)
	}
	return c, nil
}

// presentFeatures is the feature columns the table must have: s.features,
// or where they are optional (s.some) those of them it has, all or none.
func presentFeatures(t table, s tableSpec) ([]string, error) {
	if !s.some {
		return s.features, nil
	}
	var have []string
	for _, name := range s.features {
		if slices.Contains(t.columns(), name) {
			have = append(have, name)
		}
	}
	if len(have) > 0 && len(have) < len(s.features) {
		_, err := column(t, s.features[slices.IndexFunc(s.features, func(n string) bool { return !slices.Contains(have, n) })], "--features")
		return nil, fmt.Errorf("%w (a type's table has every --features column, or none for a type without features)", err)
	}
	return have, nil
}

// numericColumns picks the default feature columns from the first row:
// every column other than the id, label, split and ignored ones whose cell
// is a number or a list of numbers. bare allows none.
func numericColumns(t table, c nodeColumns, bare bool) ([]int, error) {
	var feat []int
	for i := range t.columns() {
		if c.other(i) {
			continue
		}
		if _, err := t.numbers(i, nil); err == nil {
			feat = append(feat, i)
		}
	}
	if len(feat) == 0 && !bare {
		return nil, fmt.Errorf("%s: no numeric columns for features besides the id, label and split (row 1); name them with --features", t.path())
	}
	return feat, nil
}

// add reads the current row into nd; row is scratch space, returned.
func (nd *nodes) add(t table, c nodeColumns, row []float64) ([]float64, error) {
	id, ok := t.text(c.id)
	if !ok {
		return row, t.errorAt(c.id, errNull)
	}
	if err := nd.ids.add(id); err != nil {
		return row, t.errorAt(c.id, err)
	}
	for _, f := range c.feat {
		n0 := len(row)
		var err error
		if row, err = t.numbers(f, row); err != nil {
			return row, t.errorAt(f, fmt.Errorf("features: %w", err))
		}
		for _, x := range row[n0:] {
			if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > math.MaxFloat32 {
				return row, t.errorAt(f, fmt.Errorf("feature %v is not a finite float32", x))
			}
		}
	}
	if nd.dim == 0 {
		nd.dim = len(row)
	}
	if len(row) != nd.dim {
		return row, t.errorAt(c.feat[len(c.feat)-1], fmt.Errorf("%d feature values, but row 1 has %d (a list column's lists must have one length)", len(row), nd.dim))
	}
	for _, x := range row {
		nd.feat = append(nd.feat, float32(x))
	}
	label := int32(-1)
	if c.label >= 0 {
		var err error
		if label, err = parseLabel(t.text(c.label)); err != nil {
			return row, t.errorAt(c.label, err)
		}
		nd.labels = append(nd.labels, label)
	}
	switch len(c.split) {
	case 1:
		return row, nd.addSplit(t, c.split[0], label)
	case 3:
		return row, nd.addMasks(t, c.split, label)
	}
	return row, nil
}

// other reports whether column i is the id, the label, a split column or
// an ignored one.
func (c nodeColumns) other(i int) bool {
	return i == c.id || i == c.label || slices.Contains(c.split, i) || slices.Contains(c.ignore, i)
}

// splitNames are the split column's values: train, valid, test; empty,
// null or none leave the vertex out of the split.
var splitNames = [][]string{{"train"}, {"valid", "val", "validation"}, {"test"}}

// addSplit puts the current row's vertex in the split its column names.
func (nd *nodes) addSplit(t table, c int, label int32) error {
	s, ok := t.text(c)
	s = strings.ToLower(strings.TrimSpace(s))
	if !ok || s == "" || s == "none" {
		return nil
	}
	for i, names := range splitNames {
		if slices.Contains(names, s) {
			if label < 0 {
				return t.errorAt(c, fmt.Errorf("the vertex is in the %s split but has no label", s))
			}
			nd.split[i] = append(nd.split[i], nd.ids.len()-1)
			return nil
		}
	}
	return t.errorAt(c, fmt.Errorf("split %s: want train, valid (val), test, none or empty", quote.Quote(s)))
}

// addMasks puts the current row's vertex in the split whose mask column
// (train, valid, test) is true (true or 1; false, 0, empty or null: not in
// it); one at most.
func (nd *nodes) addMasks(t table, masks []int, label int32) error {
	in := -1
	for i, c := range masks {
		s, ok := t.text(c)
		set, err := strconv.ParseBool(strings.TrimSpace(s))
		switch {
		case !ok || strings.TrimSpace(s) == "":
			continue
		case err != nil:
			return t.errorAt(c, fmt.Errorf("mask %s: want true, false, 1, 0 or empty", quote.Quote(s)))
		case !set:
			continue
		case in >= 0:
			return t.errorAt(c, fmt.Errorf("the vertex is in two splits (%s and %s)", quote.Quote(t.columns()[masks[in]]), quote.Quote(t.columns()[c])))
		case label < 0:
			return t.errorAt(c, errors.New("the vertex is in a split but has no label"))
		}
		in = i
	}
	if in >= 0 {
		nd.split[in] = append(nd.split[in], nd.ids.len()-1)
	}
	return nil
}
