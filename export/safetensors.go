// Package export writes trained parameters for other frameworks: the
// safetensors format (a little-endian uint64 header length, a JSON header
// naming each tensor's dtype, shape and byte range, then the raw
// little-endian data), under the state_dict names of PyTorch Geometric's
// models (pyg.go), so that torch_geometric's GraphSAGE, GCN, GIN or GAT
// loads them with load_state_dict.
package export

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
)

// Tensor is one named float32 tensor, row-major.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

type headerEntry struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// WriteSafetensors writes tensors (sorted by name, as the format's own
// writers do) and metadata to path atomically: a temporary file in the same
// directory, synced, renamed over path.
func WriteSafetensors(path string, tensors []Tensor, metadata map[string]string) error {
	ts := append([]Tensor(nil), tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	header := map[string]any{}
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	var off int64
	for _, t := range ts {
		n := 1
		for _, d := range t.Shape {
			n *= d
		}
		if n != len(t.Data) {
			return fmt.Errorf("export: tensor %s: shape %v holds %d values, not %d", t.Name, t.Shape, n, len(t.Data))
		}
		if _, dup := header[t.Name]; dup {
			return fmt.Errorf("export: tensor %s named twice", t.Name)
		}
		header[t.Name] = headerEntry{DType: "F32", Shape: t.Shape, Offsets: [2]int64{off, off + int64(4*n)}}
		off += int64(4 * n)
	}
	hj, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(hj)%8 != 0 { // the data starts 8-byte aligned
		hj = append(hj, ' ')
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".safetensors-*")
	if err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriterSize(f, 1<<20)
	binary.Write(w, binary.LittleEndian, uint64(len(hj)))
	w.Write(hj)
	buf := make([]byte, 4)
	for _, t := range ts {
		for _, v := range t.Data {
			binary.LittleEndian.PutUint32(buf, math.Float32bits(v))
			w.Write(buf)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("export %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("export %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("export %s: %w", path, err)
	}
	return nil
}

// ReadSafetensors reads a file written by WriteSafetensors (float32
// tensors only) back: the tensors by name and the metadata.
func ReadSafetensors(path string) (map[string]Tensor, map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if len(raw) < 8 {
		return nil, nil, fmt.Errorf("%s: %d bytes, too short for a safetensors header", path, len(raw))
	}
	n := binary.LittleEndian.Uint64(raw)
	if n > uint64(len(raw)-8) {
		return nil, nil, fmt.Errorf("%s: header of %d bytes past the end of the file", path, n)
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &header); err != nil {
		return nil, nil, fmt.Errorf("%s: header: %w", path, err)
	}
	data := raw[8+n:]
	out := map[string]Tensor{}
	var meta map[string]string
	for name, msg := range header {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &meta); err != nil {
				return nil, nil, fmt.Errorf("%s: metadata: %w", path, err)
			}
			continue
		}
		var e headerEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, nil, fmt.Errorf("%s: tensor %s: %w", path, name, err)
		}
		if e.DType != "F32" || e.Offsets[0] < 0 || e.Offsets[1] > int64(len(data)) || e.Offsets[0] > e.Offsets[1] || (e.Offsets[1]-e.Offsets[0])%4 != 0 {
			return nil, nil, fmt.Errorf("%s: tensor %s: dtype %s, bytes %v of %d", path, name, e.DType, e.Offsets, len(data))
		}
		vals := make([]float32, (e.Offsets[1]-e.Offsets[0])/4)
		for i := range vals {
			vals[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[e.Offsets[0]+int64(4*i):]))
		}
		out[name] = Tensor{Name: name, Shape: e.Shape, Data: vals}
	}
	return out, meta, nil
}
