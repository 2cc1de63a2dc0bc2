package edgelist

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fanout-gnn/fanout/dataset/internal/gzipfile"
)

// csvTable reads a CSV or TSV file whose first line names the columns.
type csvTable struct {
	name   string
	f      *os.File
	r      *csv.Reader
	header []string
	rec    []string
	row    int64
	read   *countingReader // the bytes taken from the file
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

func openCSV(path string, f *os.File, comma rune) (*csvTable, error) {
	t := &csvTable{name: path, f: f, read: &countingReader{r: f}}
	in, _, err := gzipfile.Reader(path, t.read)
	if err != nil {
		return nil, err
	}
	t.r = csv.NewReader(in)
	t.r.Comma = comma
	t.r.ReuseRecord = true
	t.r.LazyQuotes = comma == '\t'
	header, err := t.r.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty file: want a header line naming the columns", path)
	}
	if err != nil {
		return nil, t.readError(err)
	}
	t.header = append([]string(nil), header...)
	t.header[0] = strings.TrimPrefix(t.header[0], "\ufeff")
	for i, h := range t.header {
		t.header[i] = strings.TrimSpace(h)
	}
	return t, nil
}

func (t *csvTable) path() string      { return t.name }
func (t *csvTable) offset() int64     { return t.read.n }
func (t *csvTable) columns() []string { return t.header }

func (t *csvTable) next() (bool, error) {
	rec, err := t.r.Read()
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	t.row++
	if err != nil {
		return false, t.readError(err)
	}
	t.rec = rec
	return true, nil
}

// readError words a CSV reader's error with the file and row.
func (t *csvTable) readError(err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: after row %d: %w", t.name, t.row-1, err)
	}
	e := &RowError{File: t.name, Row: t.row, Line: int64(pe.StartLine), Err: pe.Err}
	if errors.Is(pe.Err, csv.ErrFieldCount) {
		e.Err = fmt.Errorf("wrong number of fields: want %d as the header names", len(t.header))
	}
	if t.row == 0 {
		return fmt.Errorf("%s: header line: %w", t.name, pe.Err)
	}
	return e
}

func (t *csvTable) text(c int) (string, bool) {
	s := t.rec[c]
	return s, strings.TrimSpace(s) != ""
}

func (t *csvTable) numbers(c int, dst []float64) ([]float64, error) {
	s, ok := t.text(c)
	if !ok {
		return dst, errNull
	}
	dst, list, err := parseList(s, dst)
	if list || err != nil {
		return dst, err
	}
	x, err := parseNumber(s)
	return append(dst, x), err
}

func (t *csvTable) errorAt(c int, err error) error {
	line, _ := t.r.FieldPos(max(c, 0))
	e := &RowError{File: t.name, Row: t.row, Line: int64(line), Err: err}
	if c >= 0 {
		e.Column = t.header[c]
	}
	return e
}

func (t *csvTable) close() error { return t.f.Close() }
