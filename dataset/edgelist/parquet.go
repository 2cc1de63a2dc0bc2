package edgelist

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/fanout-gnn/fanout/internal/quote"
	"github.com/parquet-go/parquet-go"
)

// parquetTable reads a Parquet file's rows in batches, through
// parquet-go's untyped rows. A top-level column is a scalar or a list of
// scalars (one leaf column); nested groups are refused when read.
type parquetTable struct {
	name   string
	f      *os.File
	r      *parquet.Reader
	names  []string
	leaves [][]int // top-level column -> its leaf column indices
	buf    []parquet.Row
	n, at  int               // rows in buf, the current one
	cells  [][]parquet.Value // leaf column -> values of the current row
	row    int64
	rows   int64 // in the file
	size   int64 // of the file
}

// parquetBatch is the number of rows read at a time.
const parquetBatch = 1024

func openParquet(path string, f *os.File) (t *parquetTable, err error) {
	defer recoverAs(path, &err)
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w", path, quote.Err(err))
	}
	t = &parquetTable{name: path, f: f, r: parquet.NewReader(pf), buf: make([]parquet.Row, parquetBatch),
		rows: pf.NumRows(), size: st.Size()}
	schema := pf.Schema()
	for _, fld := range schema.Fields() {
		t.names = append(t.names, fld.Name())
	}
	leaves := schema.Columns()
	t.leaves = make([][]int, len(t.names))
	for i, p := range leaves {
		for c, name := range t.names {
			if p[0] == name {
				t.leaves[c] = append(t.leaves[c], i)
			}
		}
	}
	t.cells = make([][]parquet.Value, len(leaves))
	return t, nil
}

// recoverAs turns a panic of the Parquet library on a damaged file into an
// error naming the file.
func recoverAs(path string, err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("%s: damaged Parquet file: %s", path, quote.Quote(fmt.Sprint(p)))
	}
}

func (t *parquetTable) path() string      { return t.name }
func (t *parquetTable) columns() []string { return t.names }

// offset is the share of the file's rows read, in bytes of the file.
func (t *parquetTable) offset() int64 {
	if t.rows == 0 {
		return t.size
	}
	return int64(float64(t.size) * float64(t.row) / float64(t.rows))
}

func (t *parquetTable) next() (ok bool, err error) {
	defer recoverAs(t.name, &err)
	if t.at+1 >= t.n {
		n, err := t.r.ReadRows(t.buf)
		if n == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				return false, nil
			}
			return false, fmt.Errorf("%s: after row %d: %w", t.name, t.row, quote.Err(err))
		}
		t.n, t.at = n, -1
	}
	t.at++
	t.row++
	clear(t.cells)
	t.buf[t.at].Range(func(c int, v []parquet.Value) bool {
		t.cells[c] = v
		return true
	})
	return true, nil
}

// values is the current row's values of top-level column c, nulls dropped;
// it fails for a nested group.
func (t *parquetTable) values(c int) ([]parquet.Value, error) {
	if len(t.leaves[c]) != 1 {
		return nil, fmt.Errorf("a nested group of %d columns, want a scalar or a list", len(t.leaves[c]))
	}
	vals := t.cells[t.leaves[c][0]]
	out := vals[:0:0]
	for _, v := range vals {
		if !v.IsNull() {
			out = append(out, v)
		}
	}
	return out, nil
}

func (t *parquetTable) text(c int) (string, bool) {
	vals, err := t.values(c)
	if err != nil || len(vals) == 0 {
		return "", false
	}
	v := vals[0]
	switch v.Kind() {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return string(v.ByteArray()), true
	case parquet.Int32:
		return strconv.FormatInt(int64(v.Int32()), 10), true
	case parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10), true
	}
	return strconv.FormatFloat(number(v), 'g', -1, 64), true
}

// number is a numeric value as float64 (int64 ids are read exactly, as text).
func number(v parquet.Value) float64 {
	switch v.Kind() {
	case parquet.Boolean:
		if v.Boolean() {
			return 1
		}
		return 0
	case parquet.Int32:
		return float64(v.Int32())
	case parquet.Int64:
		return float64(v.Int64())
	case parquet.Float:
		return float64(v.Float())
	case parquet.Double:
		return v.Double()
	}
	return math.NaN()
}

func (t *parquetTable) numbers(c int, dst []float64) ([]float64, error) {
	vals, err := t.values(c)
	if err != nil {
		return dst, err
	}
	if len(vals) == 0 {
		return dst, errNull
	}
	for _, v := range vals {
		switch v.Kind() {
		case parquet.ByteArray, parquet.FixedLenByteArray, parquet.Int96:
			return dst, fmt.Errorf("%s values, not numbers", v.Kind())
		}
		dst = append(dst, number(v))
	}
	return dst, nil
}

func (t *parquetTable) errorAt(c int, err error) error {
	e := &RowError{File: t.name, Row: t.row, Err: err}
	if c >= 0 {
		e.Column = t.names[c]
	}
	return e
}

func (t *parquetTable) close() error {
	return errors.Join(t.r.Close(), t.f.Close())
}
