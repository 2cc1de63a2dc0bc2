package tensorboard

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// fuzzFile is a small event file: the version event and two scalars.
func fuzzFile() []byte {
	t := castagnoli()
	b := appendRecord(nil, t, versionEvent(1.5))
	b = appendRecord(b, t, scalarEvent(nil, 2.5, 3, "loss", 0.25))
	return appendRecord(b, t, scalarEvent(nil, 3.5, 4, "valid/acc", float32(math.NaN())))
}

// header is a record header announcing n bytes, its length CRC right.
func header(n uint64) []byte {
	var h [8]byte
	binary.LittleEndian.PutUint64(h[:], n)
	return binary.LittleEndian.AppendUint32(h[:], maskedCRC(castagnoli(), h[:]))
}

// FuzzReadScalars: any bytes read as an event file (damaged framing,
// CRCs, records cut short, lengths past the file or past maxRecord), and
// any bytes framed with right CRCs as the event after the version (so
// that malformed protocol buffers reach the decoder), give scalars or a
// one-line error of bounded length, never a panic or a hang; what is
// read is what the writer's encoding of it reads back as.
func FuzzReadScalars(f *testing.F) {
	good := fuzzFile()
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add(good[:11])
	f.Add(flip(good, 0))
	f.Add(flip(good, len(good)-6))
	f.Add(append(header(maxRecord), 1, 2, 3))
	f.Add(header(maxRecord + 1))
	f.Add(header(1 << 63))
	f.Add([]byte{0x2a, 0x7f, 0x0a})                                     // a summary longer than the event
	f.Add([]byte{0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80})       // a double cut short
	f.Add([]byte{0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) // a varint that does not end
	// A file whose first event's file_version is 500 bytes: quoted in part.
	f.Add(appendRecord(nil, castagnoli(), append([]byte{0x1a, 0xf4, 0x03}, strings.Repeat("v", 500)...)))
	f.Add(scalarEvent(nil, 1, 2, "x", 3))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRead(t, data)
		tb := castagnoli()
		checkRead(t, appendRecord(appendRecord(nil, tb, versionEvent(0)), tb, data))
	})
}

// checkRead reads data as an event file and checks the error's length
// and lines, or that the scalars read are written and read back alike.
func checkRead(t *testing.T, data []byte) {
	got, err := readScalars(bytes.NewReader(data), "events")
	if err != nil {
		if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 400 {
			t.Fatalf("error of %d bytes or lines: %q", len(msg), msg)
		}
		return
	}
	tb := castagnoli()
	b := appendRecord(nil, tb, versionEvent(0))
	for _, s := range got {
		b = appendRecord(b, tb, scalarEvent(nil, s.Wall, s.Step, s.Tag, s.Value))
	}
	again, err := readScalars(bytes.NewReader(b), "again")
	if err != nil || len(again) != len(got) {
		t.Fatalf("the scalars read, written again, read back as %d, %v; want %d", len(again), err, len(got))
	}
	for i, s := range again {
		w := got[i]
		if s.Tag != w.Tag || s.Step != w.Step || math.Float64bits(s.Wall) != math.Float64bits(w.Wall) || math.Float32bits(s.Value) != math.Float32bits(w.Value) {
			t.Fatalf("scalar %d: %+v, written again %+v", i, w, s)
		}
	}
}
