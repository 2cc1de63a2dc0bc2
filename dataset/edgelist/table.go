package edgelist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/internal/quote"
)

// RowError is a bad value of an input file: the file, the data row
// (1-based, the header not counted), the CSV line where there is one, and
// the column.
type RowError struct {
	File   string
	Row    int64
	Line   int64 // CSV: the line the row starts on; 0 for Parquet
	Column string
	Err    error
}

func (e *RowError) Error() string {
	where := fmt.Sprintf("row %d", e.Row)
	if e.Line > 0 {
		where += fmt.Sprintf(" (line %d)", e.Line)
	}
	if e.Column != "" {
		where += ", column " + quote.Quote(e.Column)
	}
	return fmt.Sprintf("%s: %s: %v", e.File, where, e.Err)
}

func (e *RowError) Unwrap() error { return e.Err }

// table is one input file read row by row, in order: CSV or TSV (with a
// header row, optionally gzip) or Parquet. Columns are the top-level
// column names; a cell is null where CSV has an empty field or Parquet a
// null value.
type table interface {
	path() string
	columns() []string
	// next moves to the next row; false at the end of the file.
	next() (bool, error)
	// text is the cell of column c as text (a Parquet number in decimal);
	// false where it is null.
	text(c int) (string, bool)
	// numbers appends the cell's numbers to dst: one for a scalar, each
	// element of a list (a Parquet list, or a CSV cell "[1, 2.5, 3]").
	numbers(c int, dst []float64) ([]float64, error)
	// errorAt wraps err as a RowError of the current row and column c.
	errorAt(c int, err error) error
	// offset is about how many bytes of the file have been read, for
	// progress reports.
	offset() int64
	close() error
}

// openTable opens a CSV, TSV or Parquet file, by its name (.parquet, .pq;
// .tsv or .tab for tab-separated; anything else is CSV) or by Parquet's
// magic bytes. CSV may be gzip-compressed (by its magic bytes, whatever the
// name; a name ending in .gz must be gzip: gzipfile.Reader).
func openTable(path string) (table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	var magic [4]byte
	n, _ := f.ReadAt(magic[:], 0)
	ext := strings.ToLower(filepath.Ext(strings.TrimSuffix(strings.ToLower(path), ".gz")))
	if ext == ".parquet" || ext == ".pq" || (n == 4 && string(magic[:]) == "PAR1") {
		t, err := openParquet(path, f)
		if err != nil {
			f.Close()
			return nil, err
		}
		return t, nil
	}
	comma := ','
	if ext == ".tsv" || ext == ".tab" {
		comma = '\t'
	}
	t, err := openCSV(path, f, comma)
	if err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

// column finds the column name of t, or fails naming the file, the flag
// that chose it and the columns there are.
func column(t table, name, flag string) (int, error) {
	if i := slices.Index(t.columns(), name); i >= 0 {
		return i, nil
	}
	return 0, fmt.Errorf("%s: no column %s (%s); its columns are %s", t.path(), quote.Quote(name), flag, quote.Quote(strings.Join(t.columns(), ", ")))
}

// parseList parses a CSV list cell, "[1, 2.5, 3]" (commas or spaces between
// the numbers), appending its numbers to dst; ok is false where s is not
// bracketed.
func parseList(s string, dst []float64) (_ []float64, ok bool, err error) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return dst, false, nil
	}
	for i, f := range strings.FieldsFunc(s[1:len(s)-1], func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return dst, true, fmt.Errorf("element %d of the list, %s, is not a number", i, quote.Quote(f))
		}
		dst = append(dst, x)
	}
	return dst, true, nil
}

// parseNumber parses a scalar cell.
func parseNumber(s string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fmt.Errorf("%s is not a number", quote.Quote(s))
	}
	return x, nil
}

// errNull is the error of a required cell that is empty or null.
var errNull = errors.New("empty (null)")
