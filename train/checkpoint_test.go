package train

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sampleCheckpoint() *Checkpoint {
	c := &Checkpoint{Config: Defaults(), State: State{Epoch: 3, StepInEpoch: 2, AdamT: 40, BestValid: 0.5},
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
	got, err := LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip differs:\n%+v\n%+v", got, c)
	}
	raw, _ := os.ReadFile(path)
	os.WriteFile(path, raw[:len(raw)-5], 0o644)
	if _, err := LoadCheckpoint(path); err == nil || !strings.Contains(err.Error(), "truncated") || !strings.Contains(err.Error(), path) {
		t.Fatalf("truncated checkpoint: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("Save left temporary files: %v", entries)
	}
}

func FuzzDecodeCheckpoint(f *testing.F) {
	var buf bytes.Buffer
	sampleCheckpoint().encode(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(checkpointMagic))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCheckpoint(bytes.NewReader(b))
		if err == nil && len(c.Data) != len(c.Params) {
			t.Fatalf("decoded %d arrays for %d params", len(c.Data), len(c.Params))
		}
	})
}
