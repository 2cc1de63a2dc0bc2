package tensorboard

import (
	"bytes"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestEventEncoding checks one scalar event's bytes against the
// protocol-buffer encoding of event.proto worked out by hand.
func TestEventEncoding(t *testing.T) {
	got := scalarEvent(nil, 1.5, 3, "loss", 0.25)
	want := []byte{
		0x09, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, // wall_time 1.5 (double)
		0x10, 0x03, // step 3
		0x2a, 0x0d, // summary, 13 bytes
		0x0a, 0x0b, // value, 11 bytes
		0x0a, 0x04, 'l', 'o', 's', 's', // tag
		0x15, 0, 0, 0x80, 0x3e, // simple_value 0.25 (float)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("event\n% x\nwant\n% x", got, want)
	}
	if c := crc32.Checksum([]byte("123456789"), castagnoli()); c != 0xe3069283 {
		t.Fatalf("CRC-32C check value %#x, want 0xe3069283", c)
	}
}

// TestWriteReadBack writes scalars and reads the file back, CRCs checked.
func TestWriteReadBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tb")
	w, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1_700_000_000, 250_000_000)
	want := []Scalar{
		{Wall: 1_700_000_000.25, Step: 0, Tag: "train/loss", Value: 2.5},
		{Wall: 1_700_000_000.25, Step: 100, Tag: "train/loss", Value: 1.25},
		{Wall: 1_700_000_000.25, Step: 1, Tag: "epoch/valid_acc", Value: 0.75},
		{Wall: 1_700_000_000.25, Step: 1 << 40, Tag: "epoch/time_s", Value: 12.5},
	}
	for _, s := range want {
		if err := w.ScalarAt(s.Tag, s.Step, float64(s.Value), at); err != nil {
			t.Fatal(err)
		}
	}
	before := time.Now()
	if err := w.Scalar("steps_per_s", 7, 3.5); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	flushed, err := ReadScalars(w.Path())
	if err != nil || len(flushed) != 5 {
		t.Fatalf("after Flush: %d scalars, %v", len(flushed), err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(w.Path())
	if ok, _ := regexp.MatchString(`^events\.out\.tfevents\.\d{10}\.[^/]+\.\d+\.0$`, name); !ok || filepath.Dir(w.Path()) != dir {
		t.Fatalf("file %s", w.Path())
	}
	got, err := ReadScalars(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range want {
		if got[i] != s {
			t.Fatalf("scalar %d: %+v, want %+v", i, got[i], s)
		}
	}
	last := got[4]
	if last.Tag != "steps_per_s" || last.Step != 7 || last.Value != 3.5 || last.Wall < float64(before.Unix()) {
		t.Fatalf("last scalar %+v", last)
	}
	// A second writer in the same directory gets a file of its own.
	w2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if w2.Path() == w.Path() {
		t.Fatal("two writers share a file")
	}
}

// TestReadRejectsDamage checks that a flipped byte fails a CRC and a cut
// file is reported.
func TestReadRejectsDamage(t *testing.T) {
	w, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for step := range int64(3) {
		if err := w.Scalar("loss", step, 1/float64(step+1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"flipped data byte", flip(good, len(good)-6), "data CRC"},
		{"flipped length byte", flip(good, 0), "length CRC"},
		{"cut", good[:len(good)-3], "cut short"},
	} {
		path := filepath.Join(t.TempDir(), "events.out.tfevents.1.h")
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadScalars(path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// flip is b with byte i inverted.
func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0xff
	return c
}
