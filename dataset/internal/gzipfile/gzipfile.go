// Package gzipfile reads the text inputs of the importers (CSV edge lists,
// OGB's raw files, GraphBolt's edge files), gzip-compressed or plain, so
// that each importer says the same about a damaged file: a file named .gz
// that is not gzip, and a gzip stream that stops before its end, are one
// line each naming the file.
package gzipfile

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fanout-gnn/fanout/internal/quote"
)

// ErrTruncated is the read error of a gzip stream that ends before its
// end (a partial download or copy); the importers name the file and the
// row before it.
var ErrTruncated = errors.New("the file is truncated: its gzip stream stops before its end")

// bufferSize is the read buffer in front of the file, in bytes.
const bufferSize = 1 << 20

// magic starts every gzip stream (RFC 1952).
const magic = "\x1f\x8b"

// Reader is the text of the file at path, read from raw (the file, or a
// reader counting its bytes) through a 1 MiB buffer: decompressed when
// it starts with gzip's magic bytes, whatever its name; as it is
// otherwise, unless its name ends in .gz, which is then an error saying
// that the file is not gzip. The caller closes the file; there is
// nothing else to close. A read that meets the end of a gzip stream
// early returns ErrTruncated.
func Reader(path string, raw io.Reader) (io.Reader, bool, error) {
	br := bufio.NewReaderSize(raw, bufferSize)
	head, err := br.Peek(len(magic))
	if string(head) != magic {
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, false, fmt.Errorf("%s: %w", path, err)
		}
		if Named(path) {
			start, _ := br.Peek(32)
			if len(start) == 0 {
				return nil, false, fmt.Errorf("%s: not a gzip file: its name ends in .gz, but it is empty", path)
			}
			return nil, false, fmt.Errorf("%s: not a gzip file: its name ends in .gz, but it starts with %s, not gzip's magic bytes 1f 8b",
				path, quote.Quote(string(start)))
		}
		return br, false, nil
	}
	gz, err := gzip.NewReader(br)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return nil, false, fmt.Errorf("%s: %w", path, ErrTruncated)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: not a readable gzip file: %w", path, err)
	}
	return truncation{gz}, true, nil
}

// Named reports whether path's name ends in .gz (in any case).
func Named(path string) bool {
	return strings.HasSuffix(strings.ToLower(path), ".gz")
}

// truncation turns the gzip reader's io.ErrUnexpectedEOF into
// ErrTruncated.
type truncation struct{ r io.Reader }

func (t truncation) Read(b []byte) (int, error) {
	n, err := t.r.Read(b)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = ErrTruncated
	}
	return n, err
}
