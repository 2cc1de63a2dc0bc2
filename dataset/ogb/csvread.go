package ogb

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// parser reads one CSV file of an OGB raw folder.
type parser struct {
	cfg scanConfig
	// maxText bounds the decompressed size of the file in bytes (-1:
	// unknown). Row counts announced elsewhere (num-node-list, num-edge-list)
	// are checked against it before memory is allocated for them.
	maxText int64
	// counts names the file that announces the vertex count, for
	// messages: num-node-list, or a typed folder's num-node-dict.
	counts string
}

// countFile is the file that announces the vertex count.
func (p *parser) countFile() string {
	if p.counts == "" {
		return "num-node-list"
	}
	return p.counts
}

// deflateMaxRatio is the largest expansion DEFLATE can achieve (1032:1).
const deflateMaxRatio = 1032

// checkRows fails when rows lines of at least minBytes bytes each (the last
// without its '\n') cannot fit the file.
func (p *parser) checkRows(rows, minBytes int64, what string) error {
	if p.maxText < 0 || rows == 0 {
		return nil
	}
	if rows > (p.maxText+1)/minBytes {
		return fmt.Errorf("%s: too small to hold %d %s", p.cfg.name, rows, what)
	}
	return nil
}

// edges parses "src,dst" lines into vertex id arrays. numEdges is the edge
// count when known (-1 otherwise); ids must lie in [0, numNodes).
func (p *parser) edges(r io.Reader, numNodes, numEdges int64) (src, dst []int32, err error) {
	return p.edgesBetween(r, numNodes, numNodes, numEdges)
}

// edgesBetween is edges between two vertex types: source ids in [0,
// srcNodes), destination ids in [0, dstNodes).
func (p *parser) edgesBetween(r io.Reader, srcNodes, dstNodes, numEdges int64) (src, dst []int32, err error) {
	name := p.cfg.name
	parseLine := func(line []byte, no int64) (int32, int32, error) {
		comma := bytes.IndexByte(line, ',')
		if comma < 0 {
			return 0, 0, lineError(name, no, "want two comma-separated vertex ids, have %s", quote.Quote(string(line)))
		}
		a, b := line[:comma], line[comma+1:]
		if bytes.IndexByte(b, ',') >= 0 {
			return 0, 0, lineError(name, no, "want two comma-separated vertex ids, have %s", quote.Quote(string(line)))
		}
		u, ok := parseInt(a)
		if !ok {
			return 0, 0, lineError(name, no, "field 1: %s is not an integer", quote.Quote(string(a)))
		}
		v, ok := parseInt(b)
		if !ok {
			return 0, 0, lineError(name, no, "field 2: %s is not an integer", quote.Quote(string(b)))
		}
		if u < 0 || u >= srcNodes {
			return 0, 0, lineError(name, no, "field 1: vertex id %d is out of range [0, %d)", u, srcNodes)
		}
		if v < 0 || v >= dstNodes {
			return 0, 0, lineError(name, no, "field 2: vertex id %d is out of range [0, %d)", v, dstNodes)
		}
		return int32(u), int32(v), nil
	}
	if numEdges >= 0 {
		return p.edgesKnown(r, numEdges, parseLine)
	}
	return p.edgesCollected(r, parseLine)
}

// edgesKnown parses numEdges edges into preallocated arrays.
func (p *parser) edgesKnown(r io.Reader, numEdges int64, parseLine func([]byte, int64) (int32, int32, error)) ([]int32, []int32, error) {
	if err := p.checkRows(numEdges, 4, "edges"); err != nil {
		return nil, nil, err
	}
	src, dst := make([]int32, numEdges), make([]int32, numEdges)
	lines, err := scanChunks(r, p.cfg, func(c *chunk) error {
		return p.cfg.eachLine(c, func(line []byte, no int64) (err error) {
			if no >= numEdges {
				return lineError(p.cfg.name, no, "more than the %d edges that num-edge-list announces", numEdges)
			}
			src[no], dst[no], err = parseLine(line, no)
			return err
		})
	})
	if err != nil {
		return nil, nil, err
	}
	if lines != numEdges {
		return nil, nil, fmt.Errorf("%s: %d edges, but num-edge-list announces %d", p.cfg.name, lines, numEdges)
	}
	return src, dst, nil
}

// edgesCollected parses an unknown number of edges chunk by chunk.
func (p *parser) edgesCollected(r io.Reader, parseLine func([]byte, int64) (int32, int32, error)) ([]int32, []int32, error) {
	var mu sync.Mutex
	parts := map[int][2][]int32{}
	lines, err := scanChunks(r, p.cfg, func(c *chunk) error {
		s, d := make([]int32, 0, c.lines), make([]int32, 0, c.lines)
		err := p.cfg.eachLine(c, func(line []byte, no int64) error {
			u, v, err := parseLine(line, no)
			s, d = append(s, u), append(d, v)
			return err
		})
		mu.Lock()
		parts[c.seq] = [2][]int32{s, d}
		mu.Unlock()
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	src, dst := make([]int32, 0, lines), make([]int32, 0, lines)
	for seq := 0; seq < len(parts); seq++ {
		src = append(src, parts[seq][0]...)
		dst = append(dst, parts[seq][1]...)
	}
	return src, dst, nil
}

// features parses numNodes rows of comma-separated floats; the first row
// fixes the dimension. The result is [numNodes, dim] float32, row-major.
func (p *parser) features(r io.Reader, numNodes int64) ([]float32, int, error) {
	name := p.cfg.name
	br := bufio.NewReaderSize(r, 1<<16)
	first, err := readLine(br, p.cfg.maxLine)
	if errors.Is(err, errLongFirstLine) {
		return nil, 0, longLine(&p.cfg, 0)
	} else if err != nil {
		return nil, 0, readError(name, err)
	}
	dim := int64(bytes.Count(first, []byte{','})) + 1
	if len(trim(bytes.TrimRight(first, "\r\n"))) == 0 {
		return nil, 0, lineError(name, 0, "empty line (want comma-separated numbers, one row per vertex)")
	}
	if numNodes > math.MaxInt64/4/dim {
		return nil, 0, fmt.Errorf("%s: %d rows of %d features are too many", name, numNodes, dim)
	}
	if err := p.checkRows(numNodes, 2*dim, fmt.Sprintf("rows of %d features", dim)); err != nil {
		return nil, 0, err
	}
	feat := make([]float32, numNodes*dim)
	lines, err := scanChunks(io.MultiReader(bytes.NewReader(first), br), p.cfg, func(c *chunk) error {
		return p.cfg.eachLine(c, func(line []byte, no int64) error {
			if no >= numNodes {
				return lineError(name, no, "more than the %d rows that %s announces", numNodes, p.countFile())
			}
			return parseRow(name, line, no, feat[no*dim:(no+1)*dim])
		})
	})
	if err != nil {
		return nil, 0, err
	}
	if lines != numNodes {
		return nil, 0, fmt.Errorf("%s: %d rows, but %s announces %d vertices", name, lines, p.countFile(), numNodes)
	}
	return feat, int(dim), nil
}

// parseRow parses one line of len(out) comma-separated floats into out.
func parseRow(name string, line []byte, no int64, out []float32) error {
	for k := range out {
		field := line
		if i := bytes.IndexByte(line, ','); i >= 0 {
			field, line = line[:i], line[i+1:]
		} else if k < len(out)-1 {
			return lineError(name, no, "%d fields, want %d", k+1, len(out))
		} else {
			line = nil
		}
		v, ok := parseFloat32(field)
		if !ok {
			return lineError(name, no, "field %d: %s is not a finite number", k+1, quote.Quote(string(field)))
		}
		out[k] = v
	}
	if line != nil {
		return lineError(name, no, "more than %d fields", len(out))
	}
	return nil
}

// errLongFirstLine reports a first line of maxLine bytes or more.
var errLongFirstLine = errors.New("first line too long")

// readLine returns the first line of br including its '\n' (if any), or
// errLongFirstLine once it has read maxLine bytes without finding its end.
func readLine(br *bufio.Reader, maxLine int) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		switch {
		case err == nil || err == io.EOF:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(line) >= maxLine {
				return nil, fmt.Errorf("line 1 is longer than %d bytes", maxLine)
			}
		default:
			return nil, err
		}
	}
}

// labels parses numNodes class ids, one per line; an empty or NaN line is an
// unlabelled vertex (-1). It returns the ids and the class count (largest id
// + 1).
func (p *parser) labels(r io.Reader, numNodes int64) ([]int32, int, error) {
	name := p.cfg.name
	if err := p.checkRows(numNodes, 1, "labels"); err != nil {
		return nil, 0, err
	}
	labels := make([]int32, numNodes)
	lines, err := scanChunks(r, p.cfg, func(c *chunk) error {
		return p.cfg.eachLine(c, func(line []byte, no int64) error {
			if no >= numNodes {
				return lineError(name, no, "more than the %d labels that %s announces", numNodes, p.countFile())
			}
			if k := bytes.Count(line, []byte{','}); k > 0 {
				return lineError(name, no, "%d fields: multi-label tasks are not supported", k+1)
			}
			if isMissing(line) {
				labels[no] = -1
				return nil
			}
			v, ok := parseLabel(line)
			if !ok {
				return lineError(name, no, "%s is not a class id", quote.Quote(string(line)))
			}
			if v < 0 || v >= dataset.MaxClasses {
				return lineError(name, no, "label %d is out of range [0, %d)", v, dataset.MaxClasses)
			}
			labels[no] = int32(v)
			return nil
		})
	})
	if err != nil {
		return nil, 0, err
	}
	if lines != numNodes {
		return nil, 0, fmt.Errorf("%s: %d labels, but %s announces %d vertices", name, lines, p.countFile(), numNodes)
	}
	classes := int32(0)
	for _, l := range labels {
		classes = max(classes, l+1)
	}
	return labels, int(classes), nil
}

// ids parses one vertex id in [0, numNodes) per line (a split file).
func (p *parser) ids(r io.Reader, numNodes int64) ([]int64, error) {
	name := p.cfg.name
	var mu sync.Mutex
	parts := map[int][]int64{}
	_, err := scanChunks(r, p.cfg, func(c *chunk) error {
		out := make([]int64, 0, c.lines)
		err := p.cfg.eachLine(c, func(line []byte, no int64) error {
			v, ok := parseInt(line)
			if !ok {
				return lineError(name, no, "%s is not a vertex id", quote.Quote(string(line)))
			}
			if v < 0 || v >= numNodes {
				return lineError(name, no, "vertex id %d is out of range [0, %d)", v, numNodes)
			}
			out = append(out, v)
			return nil
		})
		mu.Lock()
		parts[c.seq] = out
		mu.Unlock()
		return err
	})
	if err != nil {
		return nil, err
	}
	var all []int64
	for seq := 0; seq < len(parts); seq++ {
		all = append(all, parts[seq]...)
	}
	return all, nil
}

// count parses a num-*-list file: one non-negative integer on one line (one
// graph; graph-property datasets with several graphs are not supported).
func (p *parser) count(r io.Reader) (int64, error) {
	name := p.cfg.name
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return 0, readError(name, err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\r\n \t"), []byte{'\n'})
	if len(lines) != 1 {
		return 0, fmt.Errorf("%s: %d lines: datasets of several graphs are not supported", name, len(lines))
	}
	v, ok := parseInt(bytes.TrimRight(lines[0], "\r"))
	if !ok || v < 0 {
		return 0, lineError(name, 0, "%s is not a count", quote.Quote(string(lines[0])))
	}
	return v, nil
}
