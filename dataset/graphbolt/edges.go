package graphbolt

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/dataset/internal/gzipfile"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// ends are the vertex counts of an edge file's sources and destinations,
// and what the metadata calls them, for messages.
type ends struct {
	n    [2]int64
	says [2]string // "graph.nodes[0].num is 40"
}

// sameEnds are the ends of a graph of one type of n vertices.
func sameEnds(n int64) ends {
	says := fmt.Sprintf("graph.nodes[0].num is %d", n)
	return ends{n: [2]int64{n, n}, says: [2]string{says, says}}
}

// readEdges reads the graph's edge file, numpy ([2, edges]: sources, then
// destinations) or CSV (lines src,dst without a header), checking every
// id against the vertices of its end.
func readEdges(dir string, e entry, at ends) (src, dst []int32, err error) {
	path, err := e.file(dir, true)
	if err != nil {
		return nil, nil, err
	}
	if e.format == "csv" {
		return readCSVEdges(path, at)
	}
	ints, shape, err := readInts(dir, e, func(shape []int64) string {
		if len(shape) != 2 || shape[0] != 2 {
			return "[2, edges]: a row of sources and one of destinations"
		}
		return ""
	})
	if err != nil {
		return nil, nil, err
	}
	m := shape[1]
	src, dst = make([]int32, m), make([]int32, m)
	for i := range m {
		for side, x := range []int64{ints[i], ints[m+i]} {
			if x < 0 || x >= at.n[side] {
				return nil, nil, fmt.Errorf("%s (%s): edge %d: %s %d is not a vertex (%s)",
					path, e.field, i, []string{"source", "destination"}[side], x, at.says[side])
			}
		}
		src[i], dst[i] = int32(ints[i]), int32(ints[m+i])
	}
	return src, dst, nil
}

// readCSVEdges reads lines "src,dst", gzip-compressed or not (as DGL's
// pandas reader, which decompresses a name ending in .gz).
func readCSVEdges(path string, at ends) (src, dst []int32, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	text, _, err := gzipfile.Reader(path, f)
	if err != nil {
		return nil, nil, err
	}
	r := csv.NewReader(text)
	r.FieldsPerRecord = 2
	r.ReuseRecord = true
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return src, dst, nil
		}
		if errors.Is(err, gzipfile.ErrTruncated) {
			return nil, nil, fmt.Errorf("%s: after %d edges: %w", path, len(src), err)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w (want lines src,dst)", path, err)
		}
		line, _ := r.FieldPos(0)
		var ends [2]int32
		for c, s := range rec {
			x, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil || x < 0 || x >= at.n[c] {
				return nil, nil, fmt.Errorf("%s: line %d, column %d (%s): %s is not a vertex id in [0, %d)",
					path, line, c+1, []string{"src", "dst"}[c], quote.Quote(s), at.n[c])
			}
			ends[c] = int32(x)
		}
		src, dst = append(src, ends[0]), append(dst, ends[1])
	}
}
