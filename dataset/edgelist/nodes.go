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
	id, label int
	split     []int // one column of split names, or three of train, valid and test masks; none
	feat      []int // feature columns, in order
}

// readNodes reads the node table o.Nodes.
func readNodes(o Options) (_ *nodes, err error) {
	if isNPY(o.Nodes) {
		return readNPYNodes(o)
	}
	t, err := openTable(o.Nodes)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, t.close()) }()
	cols, err := nodeColumnsOf(t, o)
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
		if nd.ids.len() == 0 && o.Features == nil {
			if cols.feat, err = numericColumns(t, cols); err != nil {
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
	if nd.classes == 0 {
		return nil, fmt.Errorf("%s: column %s: every vertex is unlabelled", t.path(), quote.Quote(o.Label))
	}
	return nd, nil
}

// nodeColumnsOf finds the id, label, split and named feature columns.
func nodeColumnsOf(t table, o Options) (nodeColumns, error) {
	var c nodeColumns
	var err error
	if c.id, err = column(t, o.ID, "--id"); err != nil {
		return c, err
	}
	if c.label, err = column(t, o.Label, "--label"); err != nil {
		return c, err
	}
	if o.Split != "" {
		names := strings.Split(o.Split, ",")
		if len(names) != 1 && len(names) != 3 {
			return c, fmt.Errorf("--split %s: want one column (train, valid, test) or three (train, valid and test masks)", quote.Quote(o.Split))
		}
		for _, name := range names {
			i, err := column(t, name, "--split")
			if err != nil {
				return c, err
			}
			c.split = append(c.split, i)
		}
	}
	for _, name := range o.Features {
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

// numericColumns picks the default feature columns from the first row:
// every column other than the id, label and split whose cell is a number
// or a list of numbers.
func numericColumns(t table, c nodeColumns) ([]int, error) {
	var feat []int
	for i := range t.columns() {
		if c.other(i) {
			continue
		}
		if _, err := t.numbers(i, nil); err == nil {
			feat = append(feat, i)
		}
	}
	if len(feat) == 0 {
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
	label, err := parseLabel(t.text(c.label))
	if err != nil {
		return row, t.errorAt(c.label, err)
	}
	nd.labels = append(nd.labels, label)
	switch len(c.split) {
	case 1:
		return row, nd.addSplit(t, c.split[0], label)
	case 3:
		return row, nd.addMasks(t, c.split, label)
	}
	return row, nil
}

// other reports whether column i is the id, the label or a split column.
func (c nodeColumns) other(i int) bool {
	return i == c.id || i == c.label || slices.Contains(c.split, i)
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
