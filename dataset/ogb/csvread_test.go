package ogb

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// newTestParser is a parser over an in-memory file.
func newTestParser(threads, chunkSize, maxLine int) *parser {
	return &parser{cfg: scanConfig{name: "f.csv", threads: threads, chunkSize: chunkSize, maxLine: maxLine}, maxText: -1}
}

// parseAll runs one of the parsers (kind 0-4) and returns its results and
// error text, for comparisons.
func parseAll(p *parser, kind int, text []byte, n int64) (any, string) {
	var out []any
	var err error
	r := bytes.NewReader(text)
	switch kind {
	case 0:
		var s, d []int32
		s, d, err = p.edges(r, n, -1)
		out = append(out, s, d)
	case 1:
		var s, d []int32
		s, d, err = p.edges(r, n, 5)
		out = append(out, s, d)
	case 2:
		var f []float32
		var dim int
		f, dim, err = p.features(r, n)
		out = append(out, f, dim)
	case 3:
		var l []int32
		var c int
		l, c, err = p.labels(r, n)
		out = append(out, l, c)
	default:
		var ids []int64
		ids, err = p.ids(r, n)
		out = append(out, ids)
	}
	if err != nil {
		return nil, err.Error()
	}
	return out, ""
}

// randomText builds a file for parser kind with rows lines.
func randomText(kind, rows, n int, rng *rand.Rand) []byte {
	var b bytes.Buffer
	for range rows {
		switch kind {
		case 0, 1:
			fmt.Fprintf(&b, "%d,%d\n", rng.IntN(n), rng.IntN(n))
		case 2:
			for j := range 40 {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.FormatFloat(rng.NormFloat64(), 'g', -1, 64))
			}
			b.WriteByte('\n')
		case 3:
			if rng.IntN(5) == 0 {
				b.WriteString("nan\n")
			} else {
				fmt.Fprintf(&b, "%d\n", rng.IntN(10))
			}
		default:
			fmt.Fprintf(&b, "%d\n", rng.IntN(n))
		}
	}
	return b.Bytes()
}

// TestChunkingDoesNotMatter parses the same files whole on one thread and cut
// into tiny chunks (lines longer than a chunk included) on three.
func TestChunkingDoesNotMatter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for kind := range 5 {
		rows := 500
		if kind == 1 {
			rows = 5
		}
		text := randomText(kind, rows, 500, rng)
		n := int64(500)
		want, wantErr := parseAll(newTestParser(1, 1<<20, 1<<20), kind, text, n)
		if wantErr != "" {
			t.Fatalf("kind %d: %s", kind, wantErr)
		}
		for _, chunk := range []int{1, 7, 64, 1000} {
			got, gotErr := parseAll(newTestParser(3, chunk, 1<<20), kind, text, n)
			if gotErr != "" || !reflect.DeepEqual(got, want) {
				t.Errorf("kind %d, chunk %d: results differ (error %q)", kind, chunk, gotErr)
			}
		}
		// An error in the middle is reported at the same line either way.
		lines := bytes.Split(text, []byte{'\n'})
		lines[len(lines)/2] = []byte("oops")
		bad := bytes.Join(lines, []byte{'\n'})
		_, e1 := parseAll(newTestParser(1, 1<<20, 1<<20), kind, bad, n)
		_, e2 := parseAll(newTestParser(3, 13, 1<<20), kind, bad, n)
		if at := fmt.Sprintf("line %d:", len(lines)/2+1); e1 == "" || e1 != e2 || !strings.Contains(e1, at) {
			t.Errorf("kind %d: errors %q and %q", kind, e1, e2)
		}
	}
}

func TestLongLine(t *testing.T) {
	text := []byte("1,2\n" + strings.Repeat("9", 100) + ",1\n")
	for _, chunk := range []int{3, 1 << 20} {
		_, err := parseAll(newTestParser(2, chunk, 50), 0, text, 10)
		if err != "f.csv: line 2: longer than 49 bytes" {
			t.Errorf("chunk %d: %q", chunk, err)
		}
	}
}

func TestParseFloat32NoAlloc(t *testing.T) {
	field := []byte("-0.08855470269918442")
	allocs := testing.AllocsPerRun(100, func() {
		if v, ok := parseFloat32(field); !ok || v != float32(-0.08855470269918442) {
			t.Fatalf("parsed %v %v", v, ok)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per field", allocs)
	}
}

func TestParseInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {" 42 ", 42, true}, {"-7", -7, true}, {"+3", 3, true},
		{"9223372036854775807", 1<<63 - 1, true}, {"-9223372036854775808", -1 << 63, true},
		{"9223372036854775808", 0, false}, {"", 0, false}, {"-", 0, false}, {"1.0", 0, false}, {"1e3", 0, false},
	} {
		v, ok := parseInt([]byte(c.in))
		if v != c.want || ok != c.ok {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", c.in, v, ok, c.want, c.ok)
		}
	}
}

// FuzzCSV checks that no input panics the parsers and that the outcome,
// error text included, does not depend on chunking or thread count.
func FuzzCSV(f *testing.F) {
	for kind, text := range []string{"0,1\n2,3\n", "0,1\n1,2\n2,2\n3,4\n4,0\n", "0.5,1\n-2,3e1\n", "1\n\nnan\n2.0\n", "3\n1\n"} {
		f.Add(uint8(kind), []byte(text))
	}
	f.Add(uint8(2), []byte("1,2\n3\n"))
	f.Add(uint8(0), []byte("1,2\r\n3,99999999999999999999\n"))
	f.Fuzz(func(t *testing.T, kind uint8, text []byte) {
		k := int(kind % 5)
		want, wantErr := parseAll(newTestParser(1, 1<<20, 64), k, text, 8)
		got, gotErr := parseAll(newTestParser(3, 5, 64), k, text, 8)
		if wantErr != gotErr || !reflect.DeepEqual(got, want) {
			t.Fatalf("whole: %v %q; chunked: %v %q", want, wantErr, got, gotErr)
		}
	})
}

func benchText(b *testing.B, kind, rows int) []byte {
	b.Helper()
	return randomText(kind, rows, 1<<20, rand.New(rand.NewPCG(3, 4)))
}

// BenchmarkFeatures parses 20,000 rows of 40 floats (about 15 MB of text).
func BenchmarkFeatures(b *testing.B) {
	text := benchText(b, 2, 20000)
	p := newTestParser(0, defaultChunkSize, defaultMaxLine)
	p.cfg.threads = 2
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, _, err := p.features(bytes.NewReader(text), 20000); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEdges parses 1,000,000 edge lines.
func BenchmarkEdges(b *testing.B) {
	text := benchText(b, 0, 1000000)
	p := newTestParser(2, defaultChunkSize, defaultMaxLine)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, _, err := p.edges(bytes.NewReader(text), 1<<20, 1000000); err != nil {
			b.Fatal(err)
		}
	}
}
