package edgelist

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// idMap maps the node table's ids to dense vertex ids 0..n-1, in the order
// of its rows. The ids are integers (64-bit) when every one of them is,
// otherwise strings; edges' ids are looked up the same way.
type idMap struct {
	strs  map[string]int32 // while reading, and for string ids
	order []string         // the ids in row order, while reading and for string ids
	ints  map[int64]int32  // integer ids, once done
	list  []int64          // integer ids in row order, once done
	// identity, when set, is the vertex count of ids that are the dense
	// ids themselves (.npy nodes in id order): nothing to map or keep.
	identity int64
}

func newIDMap() *idMap { return &idMap{strs: map[string]int32{}} }

// add gives the next dense id to s; it fails for an id seen before (at
// that row) or past 2^31-1 vertices.
func (m *idMap) add(s string) error {
	if prev, ok := m.strs[s]; ok {
		return fmt.Errorf("id %s repeats that of row %d", quote.Quote(s), prev+1)
	}
	if int64(len(m.order)) >= graph.MaxInt32Vertices-1 {
		return fmt.Errorf("more than %d vertices: too many for this importer", graph.MaxInt32Vertices-1)
	}
	m.strs[s] = int32(len(m.order))
	m.order = append(m.order, s)
	return nil
}

// done settles the kind of the ids: integers when each id parses as one
// (and no two spell the same integer), otherwise strings.
func (m *idMap) done() {
	ints := make(map[int64]int32, len(m.order))
	list := make([]int64, len(m.order))
	for i, s := range m.order {
		x, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if _, dup := ints[x]; err != nil || dup {
			return
		}
		ints[x] = int32(i)
		list[i] = x
	}
	m.ints, m.list, m.strs, m.order = ints, list, nil, nil
}

// lookup returns the dense id of s.
func (m *idMap) lookup(s string) (int32, bool) {
	if m.identity > 0 {
		x, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		return int32(x), err == nil && x >= 0 && x < m.identity
	}
	if m.ints == nil {
		v, ok := m.strs[s]
		return v, ok
	}
	x, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, false
	}
	v, ok := m.ints[x]
	return v, ok
}

// len is the number of ids.
func (m *idMap) len() int64 {
	if m.identity > 0 {
		return m.identity
	}
	if m.ints != nil {
		return int64(len(m.list))
	}
	return int64(len(m.order))
}

// nodeIDs is the mapping as the dataset keeps it: string ids that hold a
// line break cannot be kept in ids.txt and are refused.
func (m *idMap) nodeIDs(nodes string) (*dataset.NodeIDs, error) {
	if m.identity > 0 {
		return nil, nil
	}
	if m.ints != nil {
		return &dataset.NodeIDs{Ints: m.list}, nil
	}
	for i, s := range m.order {
		if strings.ContainsAny(s, "\n\r") {
			return nil, fmt.Errorf("%s: row %d: the id %s holds a line break, which %s cannot keep", nodes, i+1, quote.Quote(s), dataset.IDNamesFile)
		}
	}
	return &dataset.NodeIDs{Strings: m.order}, nil
}

// parseLabel reads a class id: an integer in [0, 2^24), or -1, empty, null
// or NaN for an unlabelled vertex (a float column that holds integers, as
// pandas writes one with missing values, is read too).
func parseLabel(s string, ok bool) (int32, error) {
	s = strings.TrimSpace(s)
	if !ok || s == "" {
		return -1, nil
	}
	x, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		switch {
		case ferr == nil && math.IsNaN(f):
			return -1, nil
		case ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<31:
			return 0, fmt.Errorf("label %s is not an integer class id", quote.Quote(s))
		}
		x = int64(f)
	}
	if x < -1 || x >= maxClasses {
		return 0, fmt.Errorf("label %d is outside [0, %d) (-1, empty or NaN: unlabelled)", x, maxClasses)
	}
	return int32(x), nil
}
