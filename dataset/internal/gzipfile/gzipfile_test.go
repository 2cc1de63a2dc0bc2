package gzipfile

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/ogb/ogbtest"
)

// text is what the tests compress: long enough for several deflate blocks.
var text = strings.Repeat("src,dst\n12,34\n", 20000)

func compressed(t *testing.T) []byte { return ogbtest.Gzip(t, text) }

func TestReaderByContent(t *testing.T) {
	gz := compressed(t)
	for _, c := range []struct {
		name string
		data []byte
		gzip bool
	}{
		{"edges.csv.gz", gz, true},
		{"edges.csv", gz, true}, // gzip by its magic, whatever the name
		{"edges.csv", []byte(text), false},
		{"e", []byte("x"), false},
		{"empty.csv", nil, false},
	} {
		r, isGzip, err := Reader(c.name, bytes.NewReader(c.data))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := io.ReadAll(r)
		want := string(c.data)
		if c.gzip {
			want = text
		}
		if err != nil || string(got) != want || isGzip != c.gzip {
			t.Errorf("%s: read %d bytes (gzip %v), %v; want %d (gzip %v)", c.name, len(got), isGzip, err, len(want), c.gzip)
		}
	}
}

func TestReaderNotGzip(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{text, `edges.csv.GZ: not a gzip file: its name ends in .gz, but it starts with "src,dst\n12,34\nsrc,dst\n12,34\nsrc,", not gzip's magic bytes 1f 8b`},
		{"", "edges.csv.GZ: not a gzip file: its name ends in .gz, but it is empty"},
		{"\x1f", `edges.csv.GZ: not a gzip file: its name ends in .gz, but it starts with "\x1f", not gzip's magic bytes 1f 8b`},
	} {
		_, _, err := Reader("edges.csv.GZ", strings.NewReader(c.data))
		if err == nil || err.Error() != c.want {
			t.Errorf("error %v, want %s", err, c.want)
		}
	}
}

// TestReaderTruncated cuts the stream in its header, in its data and in
// its trailer: each is ErrTruncated, once, in one line.
func TestReaderTruncated(t *testing.T) {
	gz := compressed(t)
	for _, cut := range []int{5, 11, len(gz) / 2, len(gz) - 4} {
		r, _, err := Reader("e.csv.gz", bytes.NewReader(gz[:cut]))
		if err == nil {
			_, err = io.ReadAll(r)
		}
		if !errors.Is(err, ErrTruncated) || strings.Count(err.Error(), "truncated") != 1 || strings.Contains(err.Error(), "\n") {
			t.Errorf("cut at %d of %d bytes: %v, want one line saying the file is truncated", cut, len(gz), err)
		}
	}
}

func TestReaderDamagedHeader(t *testing.T) {
	gz := compressed(t)
	gz[2] = 7 // not deflate
	_, _, err := Reader("e.csv.gz", bytes.NewReader(gz))
	if err == nil || !strings.HasPrefix(err.Error(), "e.csv.gz: not a readable gzip file: ") {
		t.Errorf("error %v, want one naming the file as not a readable gzip file", err)
	}
}
