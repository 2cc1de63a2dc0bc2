package edgelist

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fanout-gnn/fanout/internal/quote"
)

// Expand turns the edge files given, paths or glob patterns (*, ?, [...]),
// into the list of files, each pattern's matches sorted; a pattern that
// matches nothing is an error.
func Expand(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		if !strings.ContainsAny(a, "*?[") {
			files = append(files, a)
			continue
		}
		m, err := filepath.Glob(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s matches no file", a)
		}
		slices.Sort(m)
		files = append(files, m...)
	}
	if len(files) == 0 {
		return nil, errors.New("no edge files")
	}
	return files, nil
}

// edges are the edge list's endpoints as dense vertex ids: edge i runs
// from src[i] to dst[i].
type edges struct {
	src, dst []int32
}

func (e *edges) add(u, v int32) error {
	e.src = append(e.src, u)
	e.dst = append(e.dst, v)
	return nil
}

// checkEvery is how many rows readEdges reads between looks at its
// context and progress reports.
const checkEvery = 1 << 16

// ends are the id maps of an edge file's two columns, and the node tables
// they come from (for messages): one table's twice for a graph of one type.
type ends struct {
	src, dst           *idMap
	srcTable, dstTable string
}

// oneTable is the ends of a graph of one type, whose ids are ids.
func oneTable(ids *idMap, table string) ends { return ends{ids, ids, table, table} }

// readEdges reads the edges of one file, looking their ids up in the maps
// of e, and hands each to emit (u the source, v the destination). Every
// checkEvery rows it stops if ctx is done and calls read, when non-nil,
// with the bytes of the file read so far.
func readEdges(ctx context.Context, file string, o Options, e ends, emit func(u, v int32) error, read func(int64)) (err error) {
	t, err := openTable(file)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, t.close()) }()
	src, err := column(t, o.Src, "--src")
	if err != nil {
		return err
	}
	dst, err := column(t, o.Dst, "--dst")
	if err != nil {
		return err
	}
	for rows := 0; ; rows++ {
		if rows%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if read != nil {
				read(t.offset())
			}
		}
		ok, err := t.next()
		if err != nil || !ok {
			if read != nil {
				read(t.offset())
			}
			return err
		}
		u, err := endpoint(t, src, e.src, e.srcTable)
		if err != nil {
			return err
		}
		v, err := endpoint(t, dst, e.dst, e.dstTable)
		if err != nil {
			return err
		}
		if err := emit(u, v); err != nil {
			return err
		}
	}
}

// endpoint looks up the vertex of column c of the current row.
func endpoint(t table, c int, ids *idMap, nodes string) (int32, error) {
	s, ok := t.text(c)
	if !ok {
		return 0, t.errorAt(c, errNull)
	}
	v, ok := ids.lookup(s)
	switch {
	case !ok && ids.identity > 0:
		return 0, t.errorAt(c, fmt.Errorf("id %s is not a row of %s (ids 0 to %d)", quote.Quote(s), nodes, ids.identity-1))
	case !ok:
		return 0, t.errorAt(c, fmt.Errorf("id %s is not in the node table %s", quote.Quote(s), nodes))
	}
	return v, nil
}
