package ogb

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fanout-gnn/fanout/dataset/internal/gzipfile"
)

// textFile is an opened CSV file, gzip-compressed (name.csv.gz) or plain
// (name.csv), read through a progress-counting reader.
type textFile struct {
	path string    // full path, used in messages
	r    io.Reader // decompressed text
	f    *os.File
	gz   bool // r decompresses
}

// findText returns the path of dir/base.csv.gz, or dir/base.csv when only
// that exists; the error names the .csv.gz file.
func findText(dir, base string) (string, error) {
	gz := filepath.Join(dir, base+".csv.gz")
	if _, err := os.Stat(gz); err == nil {
		return gz, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	plain := filepath.Join(dir, base+".csv")
	if _, err := os.Stat(plain); err == nil {
		return plain, nil
	}
	return "", fmt.Errorf("%s: file not found", gz)
}

// hasText reports whether dir holds base.csv.gz or base.csv.
func hasText(dir, base string) bool {
	_, err := findText(dir, base)
	return err == nil
}

// openText opens dir/base.csv.gz (or .csv). progress, when non-nil, is told
// the compressed bytes read so far.
func openText(dir, base string, progress func(stage string, done, total int64)) (*textFile, error) {
	path, err := findText(dir, base)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	t := &textFile{path: path, f: f}
	var raw io.Reader = f
	if progress != nil {
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		raw = &progressReader{r: f, stage: filepath.Base(path), total: st.Size(), report: progress}
	}
	if t.r, t.gz, err = gzipfile.Reader(path, raw); err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

// Close releases the file.
func (t *textFile) Close() error { return t.f.Close() }

// progressReader reports the bytes read from r, at most once per MiB.
type progressReader struct {
	r      io.Reader
	stage  string
	done   int64
	last   int64
	total  int64
	report func(stage string, done, total int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	if p.done-p.last >= 1<<20 || (err == io.EOF && p.done != p.last) {
		p.last = p.done
		p.report(p.stage, p.done, p.total)
	}
	return n, err
}
