// Package checkpoint holds what a training run saves and where: the
// checkpoint file itself (Save, Load), the run's state it records (State),
// the dataset's fingerprint that a checkpoint is checked against
// (DatasetInfo), and the run directory with its lock. It is a container:
// the training and model configurations it carries are JSON that package
// train writes and reads, so it links neither the trainer, the models nor
// the datasets.
package checkpoint

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
)

// Checkpoint formats: the magic line that starts each. Format 2 adds the
// CRC-32C trailer and the dataset's fingerprint; format 1 files still load
// (Format says which was read) and are rewritten as format 2 by the next save.
const (
	checkpointMagic   = "FANOUT-CKPT 2\n"
	checkpointMagicV1 = "FANOUT-CKPT 1\n"
)

// CurrentFormat is the format Save writes.
const CurrentFormat = 2

// crcTable is CRC-32C (Castagnoli), hardware-accelerated on amd64 and arm64.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrChecksum reports a checkpoint whose bytes do not match its checksum.
var ErrChecksum = errors.New("checksum mismatch: the file is damaged")

// Checkpoint is a saved model with its optimizer state and the run's state.
//
// File layout (format 2): checkpointMagic, a little-endian uint64 header
// length, the JSON header, then for each parameter in header order its
// weights, Adam first moment and second moment, each as little-endian
// float32, and last a little-endian uint32 CRC-32C of every byte before it.
// Format 1 is the same without the trailer.
type Checkpoint struct {
	Config  json.RawMessage `json:"config"` // the training configuration (train.Config)
	Model   json.RawMessage `json:"model"`  // the model's configuration (nn.Config)
	Dataset DatasetInfo     `json:"dataset"`
	State   State           `json:"state"`
	Params  []ParamInfo     `json:"params"`
	Data    [][3][]float32  `json:"-"` // per param: W, M, V
	Format  int             `json:"-"` // format of the file it was read from (1 or 2); 0 when made in memory
}

// ParamInfo names one saved parameter.
type ParamInfo struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
}

// Save writes the checkpoint atomically in the current format: a temporary
// file in the same directory (".ckpt-*"), synced, then renamed over path.
func (c *Checkpoint) Save(path string) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tempCheckpointPrefix+"*")
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

// encode writes the format-2 bytes of c to w.
func (c *Checkpoint) encode(w io.Writer) error {
	hdr, err := json.Marshal(c)
	if err != nil {
		return err
	}
	sum := crc32.New(crcTable)
	mw := io.MultiWriter(w, sum)
	if _, err := io.WriteString(mw, checkpointMagic); err != nil {
		return err
	}
	if err := binary.Write(mw, binary.LittleEndian, uint64(len(hdr))); err != nil {
		return err
	}
	if _, err := mw.Write(hdr); err != nil {
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
				if _, err := mw.Write(buf); err != nil {
					return err
				}
			}
		}
	}
	return binary.Write(w, binary.LittleEndian, sum.Sum32())
}

// Load reads a checkpoint file, checks its structure and, for
// format 2, its checksum. Errors name the file.
func Load(path string) (*Checkpoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := decodeCheckpoint(bufio.NewReaderSize(f, 1<<20))
	if err != nil && !errors.Is(err, ErrChecksum) && fileDamaged(f) {
		// A damaged header or shape can fail to parse before the trailer is
		// reached; the checksum says what happened.
		err = fmt.Errorf("%w (%v)", ErrChecksum, err)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return c, nil
}

// fileDamaged reports whether f is a format-2 checkpoint whose last four
// bytes are not the CRC-32C of the rest.
func fileDamaged(f *os.File) bool {
	st, err := f.Stat()
	if err != nil || st.Size() < int64(len(checkpointMagic))+4 {
		return false
	}
	magic := make([]byte, len(checkpointMagic))
	if _, err := f.ReadAt(magic, 0); err != nil || string(magic) != checkpointMagic {
		return false
	}
	sum := crc32.New(crcTable)
	if _, err := io.Copy(sum, io.NewSectionReader(f, 0, st.Size()-4)); err != nil {
		return false
	}
	var tail [4]byte
	if _, err := f.ReadAt(tail[:], st.Size()-4); err != nil {
		return false
	}
	return binary.LittleEndian.Uint32(tail[:]) != sum.Sum32()
}

// decodeCheckpoint reads a format 1 or 2 checkpoint from r; for format 2 it
// checks the trailing checksum and that nothing follows it.
func decodeCheckpoint(r io.Reader) (*Checkpoint, error) {
	c, r, sum, err := decodeHeader(r)
	if err != nil {
		return nil, err
	}
	if err := c.readData(r); err != nil {
		return nil, err
	}
	if sum == nil {
		return c, nil
	}
	want := sum.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(r, tail[:]); err != nil {
		return nil, errors.New("truncated: no checksum after the data")
	}
	if got := binary.LittleEndian.Uint32(tail[:]); got != want {
		return nil, fmt.Errorf("%w (stored CRC-32C %08x, computed %08x)", ErrChecksum, got, want)
	}
	if k, _ := io.Copy(io.Discard, r); k > 0 {
		return nil, fmt.Errorf("%d unexpected bytes after the checksum", k)
	}
	return c, nil
}

// decodeHeader reads a checkpoint's magic line and JSON header from r. It
// returns the checkpoint without its data, the reader of what follows and,
// for format 2, the running checksum of every byte read through it.
func decodeHeader(r io.Reader) (*Checkpoint, io.Reader, hash.Hash32, error) {
	magic := make([]byte, len(checkpointMagic))
	if _, err := io.ReadFull(r, magic); err != nil {
		return nil, nil, nil, errors.New("not a fanout checkpoint (too short)")
	}
	c := &Checkpoint{}
	var sum hash.Hash32
	switch string(magic) {
	case checkpointMagic:
		c.Format = 2
		sum = crc32.New(crcTable)
		sum.Write(magic)
		r = io.TeeReader(r, sum)
	case checkpointMagicV1:
		c.Format = 1
	default:
		return nil, nil, nil, errors.New("not a fanout checkpoint (bad magic)")
	}
	var n uint64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return nil, nil, nil, fmt.Errorf("truncated header: %w", err)
	}
	if n > 1<<24 {
		return nil, nil, nil, fmt.Errorf("header length %d is implausible", n)
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, nil, nil, fmt.Errorf("truncated header: %w", err)
	}
	format := c.Format
	if err := json.Unmarshal(hdr, c); err != nil {
		return nil, nil, nil, fmt.Errorf("header: %w", err)
	}
	c.Format = format
	return c, r, sum, nil
}

// ReadState reads the run state from the header of the checkpoint
// at path, without its parameters (or checking its checksum: a caller
// that loaded the file has checked it).
func ReadState(path string) (State, error) {
	f, err := os.Open(path)
	if err != nil {
		return State{}, err
	}
	defer f.Close()
	c, _, _, err := decodeHeader(bufio.NewReader(f))
	if err != nil {
		return State{}, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return c.State, nil
}

// readData reads each parameter's W, M and V as the header's shapes say.
func (c *Checkpoint) readData(r io.Reader) error {
	c.Data = make([][3][]float32, len(c.Params))
	raw := make([]byte, 1<<16)
	for i, p := range c.Params {
		size := 1
		for _, d := range p.Shape {
			if d <= 0 || size > 1<<31/d {
				return fmt.Errorf("param %s: bad shape %v", p.Name, p.Shape)
			}
			size *= d
		}
		for k := range 3 {
			// Grow as data arrives, so a lying header cannot force a huge allocation.
			a := make([]float32, 0, min(size, len(raw)/4))
			for j := 0; j < size; j += len(raw) / 4 {
				m := min(size-j, len(raw)/4)
				if _, err := io.ReadFull(r, raw[:4*m]); err != nil {
					return fmt.Errorf("param %s: truncated data", p.Name)
				}
				for q := range m {
					a = append(a, math.Float32frombits(binary.LittleEndian.Uint32(raw[4*q:])))
				}
			}
			c.Data[i][k] = a
		}
	}
	return nil
}
