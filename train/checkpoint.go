package train

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/fanout-gnn/fanout/nn"
)

// checkpointMagic starts every checkpoint file.
const checkpointMagic = "FANOUT-CKPT 1\n"

// Checkpoint is a saved model with its optimizer state and the run's state.
//
// File layout: checkpointMagic, a little-endian uint64 header length, the
// JSON header, then for each parameter in header order its weights, Adam
// first moment and second moment, each as little-endian float32.
type Checkpoint struct {
	Config  Config         `json:"config"`
	Model   nn.Config      `json:"model"`
	Dataset DatasetInfo    `json:"dataset"`
	State   State          `json:"state"`
	Params  []ParamInfo    `json:"params"`
	Data    [][3][]float32 `json:"-"` // per param: W, M, V
}

// DatasetInfo identifies the dataset a checkpoint was trained on.
type DatasetInfo struct {
	Name     string `json:"name"`
	Vertices int64  `json:"vertices"`
	FeatDim  int    `json:"feat_dim"`
	Classes  int    `json:"classes"`
}

// ParamInfo names one saved parameter.
type ParamInfo struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
}

// Save writes the checkpoint atomically: a temporary file in the same
// directory, synced, then renamed over path.
func (c *Checkpoint) Save(path string) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".ckpt-*")
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriterSize(f, 1<<20)
	if err := c.encode(w); err != nil {
		f.Close()
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if err := errors.Join(w.Flush(), f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func (c *Checkpoint) encode(w io.Writer) error {
	hdr, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, checkpointMagic); err != nil {
		return err
	}
	if err := binary.Write(w, binary.LittleEndian, uint64(len(hdr))); err != nil {
		return err
	}
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for _, p := range c.Data {
		for _, a := range p {
			for i := 0; i < len(a); i += 1 << 14 {
				buf = buf[:0]
				for _, v := range a[i:min(len(a), i+1<<14)] {
					buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
				}
				if _, err := w.Write(buf); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// LoadCheckpoint reads a checkpoint file and checks its structure.
func LoadCheckpoint(path string) (*Checkpoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := decodeCheckpoint(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return c, nil
}

func decodeCheckpoint(r io.Reader) (*Checkpoint, error) {
	magic := make([]byte, len(checkpointMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != checkpointMagic {
		return nil, errors.New("not a fanout checkpoint (bad magic)")
	}
	var n uint64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return nil, fmt.Errorf("truncated header: %w", err)
	}
	if n > 1<<24 {
		return nil, fmt.Errorf("header length %d is implausible", n)
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("truncated header: %w", err)
	}
	c := &Checkpoint{}
	if err := json.Unmarshal(hdr, c); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	c.Data = make([][3][]float32, len(c.Params))
	raw := make([]byte, 1<<16)
	for i, p := range c.Params {
		size := 1
		for _, d := range p.Shape {
			if d <= 0 || size > 1<<31/d {
				return nil, fmt.Errorf("param %s: bad shape %v", p.Name, p.Shape)
			}
			size *= d
		}
		for k := range 3 {
			// Grow as data arrives, so a lying header cannot force a huge allocation.
			a := make([]float32, 0, min(size, len(raw)/4))
			for j := 0; j < size; j += len(raw) / 4 {
				m := min(size-j, len(raw)/4)
				if _, err := io.ReadFull(r, raw[:4*m]); err != nil {
					return nil, fmt.Errorf("param %s: truncated data", p.Name)
				}
				for q := range m {
					a = append(a, math.Float32frombits(binary.LittleEndian.Uint32(raw[4*q:])))
				}
			}
			c.Data[i][k] = a
		}
	}
	return c, nil
}
