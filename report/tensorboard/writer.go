package tensorboard

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Writer appends scalar events to a new event file in a directory. Its
// methods are not safe for concurrent use.
type Writer struct {
	f    *os.File
	w    *bufio.Writer
	crc  *crc32.Table
	buf  []byte // an event being encoded
	rec  []byte // a record being framed
	path string
}

// Open creates a new event file in dir (made if absent), named as
// TensorBoard's own writers name theirs:
// events.out.tfevents.<unix seconds>.<host>.<pid>.<n>, n counting up from
// 0 past names that exist; it writes the file-version event first.
func Open(dir string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	host = strings.ReplaceAll(host, string(filepath.Separator), "_")
	now := time.Now()
	var f *os.File
	for n := 0; ; n++ {
		path := filepath.Join(dir, fmt.Sprintf("events.out.tfevents.%d.%s.%d.%d", now.Unix(), host, os.Getpid(), n))
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) || n >= 1000 {
			return nil, err
		}
	}
	w := &Writer{f: f, w: bufio.NewWriter(f), crc: castagnoli(), path: f.Name()}
	if err := w.write(versionEvent(seconds(now))); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return w, nil
}

// Path is the event file's path.
func (w *Writer) Path() string { return w.path }

// Scalar records value under tag at step, stamped now.
func (w *Writer) Scalar(tag string, step int64, value float64) error {
	return w.ScalarAt(tag, step, value, time.Now())
}

// ScalarAt records value under tag at step, stamped at.
func (w *Writer) ScalarAt(tag string, step int64, value float64, at time.Time) error {
	if tag == "" {
		return errors.New("tensorboard: a scalar needs a tag")
	}
	w.buf = scalarEvent(w.buf[:0], seconds(at), step, tag, float32(value))
	return w.write(w.buf)
}

// write frames an event as a record and buffers it.
func (w *Writer) write(event []byte) error {
	w.rec = appendRecord(w.rec[:0], w.crc, event)
	if _, err := w.w.Write(w.rec); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	return nil
}

// Flush writes the buffered events to the file, where TensorBoard, which
// reads the file as it grows, finds them.
func (w *Writer) Flush() error {
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	return nil
}

// Close flushes, syncs and closes the file.
func (w *Writer) Close() error {
	if w.f == nil {
		return nil
	}
	err := w.Flush()
	if err == nil {
		err = w.f.Sync()
	}
	err = errors.Join(err, w.f.Close())
	w.f = nil
	return err
}

// seconds is t as fractional seconds since the Unix epoch.
func seconds(t time.Time) float64 { return float64(t.Unix()) + float64(t.Nanosecond())/1e9 }
