package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sampleCheckpoint() *Checkpoint {
	c := &Checkpoint{Config: json.RawMessage(`{"model":"sage","layers":2}`), Model: json.RawMessage(`{"Kind":"sage"}`), State: State{Epoch: 3, StepInEpoch: 2, AdamT: 40, BestValid: 0.5},
		Dataset: DatasetInfo{Name: "x", Vertices: 10, FeatDim: 4, Classes: 3},
		Params:  []ParamInfo{{Name: "w", Shape: []int{4, 3}}, {Name: "b", Shape: []int{3}}}}
	for _, p := range c.Params {
		n := 1
		for _, d := range p.Shape {
			n *= d
		}
		var d [3][]float32
		for k := range d {
			d[k] = make([]float32, n)
			for i := range d[k] {
				d[k][i] = float32(i*7+k) / 3
			}
		}
		c.Data = append(c.Data, d)
	}
	return c
}

func TestCheckpointRoundTripAndTruncation(t *testing.T) {
	c := sampleCheckpoint()
	path := filepath.Join(t.TempDir(), "a.ckpt")
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Format != CurrentFormat {
		t.Fatalf("format %d, want %d", got.Format, CurrentFormat)
	}
	got.Format = 0
	if !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip differs:\n%+v\n%+v", got, c)
	}
	raw, _ := os.ReadFile(path)
	os.WriteFile(path, raw[:len(raw)-5], 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "truncated") || !strings.Contains(err.Error(), path) {
		t.Fatalf("truncated checkpoint: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("Save left temporary files: %v", entries)
	}
}

// encodeV1 writes c in format 1 (no checksum), as earlier versions did.
func encodeV1(t testing.TB, c *Checkpoint) []byte {
	var buf bytes.Buffer
	if err := c.encode(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	b = b[:len(b)-4]
	copy(b, checkpointMagicV1)
	return b
}

func TestCheckpointChecksum(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.ckpt")
	if err := sampleCheckpoint().Save(path); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	hdrEnd := len(checkpointMagic) + 8 + int(binary.LittleEndian.Uint64(good[len(checkpointMagic):]))
	// A flipped bit anywhere after the magic line (header length, header,
	// data, checksum) is a checksum error.
	for _, at := range []int{len(checkpointMagic) + 2, len(checkpointMagic) + 9, hdrEnd - 3, hdrEnd + 5, len(good) - 10, len(good) - 1} {
		bad := bytes.Clone(good)
		bad[at] ^= 0x10
		os.WriteFile(path, bad, 0o644)
		_, err := Load(path)
		if err == nil {
			t.Fatalf("byte %d flipped: loaded without error", at)
		}
		if !errors.Is(err, ErrChecksum) {
			t.Errorf("byte %d flipped: %v, want a checksum error", at, err)
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("byte %d flipped: %v does not name the file", at, err)
		}
	}
	// Bytes after the checksum.
	os.WriteFile(path, append(bytes.Clone(good), 0), 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "after the checksum") {
		t.Errorf("trailing byte: %v", err)
	}
	// A format-1 file (no checksum) still loads and says so.
	os.WriteFile(path, encodeV1(t, sampleCheckpoint()), 0o644)
	c, err := Load(path)
	if err != nil {
		t.Fatalf("format 1: %v", err)
	}
	if c.Format != 1 || !strings.Contains(OldFormatNote(path, c), "no checksum") {
		t.Errorf("format 1: format %d, note %q", c.Format, OldFormatNote(path, c))
	}
}

func TestFingerprintMismatch(t *testing.T) {
	a := DatasetInfo{Name: "a", Vertices: 10, Edges: 30, FeatDim: 4, Classes: 3, SplitHash: SplitHash([]int64{1, 2}, []int64{3}, []int64{4})}
	if d := a.Mismatch(a); d != "" {
		t.Fatalf("same fingerprint: %q", d)
	}
	b := a
	b.SplitHash = SplitHash([]int64{1}, []int64{2, 3}, []int64{4})
	if d := a.Mismatch(b); !strings.Contains(d, "split") {
		t.Errorf("moved id between splits: %q", d)
	}
	b = a
	b.Vertices, b.Classes = 11, 5
	if d := a.Mismatch(b); !strings.Contains(d, "vertices 11 (checkpoint: 10)") || !strings.Contains(d, "classes 5 (checkpoint: 3)") {
		t.Errorf("sizes: %q", d)
	}
	old := DatasetInfo{Name: "a", Vertices: 10, FeatDim: 4, Classes: 3} // format 1: no edges or split
	if d := old.Mismatch(a); d != "" {
		t.Errorf("format-1 fingerprint: %q", d)
	}
}

func FuzzDecodeCheckpoint(f *testing.F) {
	var buf bytes.Buffer
	sampleCheckpoint().encode(&buf)
	f.Add(buf.Bytes())
	f.Add(encodeV1(f, sampleCheckpoint()))
	f.Add([]byte(checkpointMagic))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCheckpoint(bytes.NewReader(b))
		if err == nil && len(c.Data) != len(c.Params) {
			t.Fatalf("decoded %d arrays for %d params", len(c.Data), len(c.Params))
		}
	})
}
