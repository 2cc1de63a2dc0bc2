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

// readEdges reads the graph's edge file, numpy ([2, edges]: sources, then
// destinations) or CSV (lines src,dst without a header), checking every
// id against the n vertices.
func readEdges(dir string, e entry, n int64) (src, dst []int32, err error) {
	path, err := e.file(dir, true)
	if err != nil {
		return nil, nil, err
	}
	if e.format == "csv" {
		return readCSVEdges(path, n)
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
			if x < 0 || x >= n {
				return nil, nil, fmt.Errorf("%s (%s): edge %d: %s %d is not a vertex (graph.nodes[0].num is %d)",
					path, e.field, i, []string{"source", "destination"}[side], x, n)
			}
		}
		src[i], dst[i] = int32(ints[i]), int32(ints[m+i])
	}
	return src, dst, nil
}

// readCSVEdges reads lines "src,dst", gzip-compressed or not (as DGL's
// pandas reader, which decompresses a name ending in .gz).
func readCSVEdges(path string, n int64) (src, dst []int32, err error) {
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
			if err != nil || x < 0 || x >= n {
				return nil, nil, fmt.Errorf("%s: line %d, column %d (%s): %s is not a vertex id in [0, %d)",
					path, line, c+1, []string{"src", "dst"}[c], quote.Quote(s), n)
			}
			ends[c] = int32(x)
		}
		src, dst = append(src, ends[0]), append(dst, ends[1])
	}
}
