package tensorboard

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/fanout-gnn/fanout/internal/quote"
)

// Scalar is one scalar event read back.
type Scalar struct {
	Wall  float64 // seconds since the Unix epoch
	Step  int64
	Tag   string
	Value float32
}

// ReadScalars reads an event file: it checks every record's CRCs and that
// the first event is the file version, and returns the scalar values in
// file order (events without one are skipped). A damaged or cut file is
// an error naming the file and the record, never a panic.
func ReadScalars(path string) ([]Scalar, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readScalars(bufio.NewReader(f), path)
}

// readScalars reads the events of r (named name in errors), as
// ReadScalars.
func readScalars(r io.Reader, name string) ([]Scalar, error) {
	t := castagnoli()
	var out []Scalar
	for i := 0; ; i++ {
		data, err := readRecord(r, t)
		if errors.Is(err, io.EOF) {
			if i == 0 {
				return nil, fmt.Errorf("%s: no events", name)
			}
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: record %d: %w", name, i, err)
		}
		e, err := decodeEvent(data)
		if err != nil {
			return nil, fmt.Errorf("%s: record %d: %w", name, i, err)
		}
		if i == 0 && e.version != fileVersion {
			return nil, fmt.Errorf("%s: the first event has file_version %s, want %q", name, quote.Quote(e.version), fileVersion)
		}
		for _, v := range e.values {
			out = append(out, Scalar{Wall: e.wall, Step: e.step, Tag: v.tag, Value: v.value})
		}
	}
}

// event is the part of a decoded Event that ReadScalars uses.
type event struct {
	wall    float64
	step    int64
	version string
	values  []value
}

type value struct {
	tag    string
	value  float32
	simple bool
}

// decodeEvent decodes an Event, skipping fields it does not know.
func decodeEvent(b []byte) (event, error) {
	var e event
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == eventWallTime && typ == protowire.Fixed64Type:
			e.wall = math.Float64frombits(x)
		case num == eventStep && typ == protowire.VarintType:
			e.step = int64(x)
		case num == eventFileVersion && typ == protowire.BytesType:
			e.version = string(v)
		case num == eventSummary && typ == protowire.BytesType:
			return eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				if num != summaryValue || typ != protowire.BytesType {
					return nil
				}
				val, err := decodeValue(v)
				if err == nil && val.simple {
					e.values = append(e.values, val)
				}
				return err
			})
		}
		return nil
	})
	return e, err
}

// decodeValue decodes a Summary.Value's tag and simple_value.
func decodeValue(b []byte) (value, error) {
	var v value
	err := eachField(b, func(num protowire.Number, typ protowire.Type, s []byte, x uint64) error {
		switch {
		case num == valueTag && typ == protowire.BytesType:
			v.tag = string(s)
		case num == valueSimple && typ == protowire.Fixed32Type:
			v.value, v.simple = math.Float32frombits(uint32(x)), true
		}
		return nil
	})
	return v, err
}

// eachField calls fn with every field of the message b: its number, wire
// type, and its bytes (BytesType) or its integer value (the others).
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, bytes []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var bytes []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x32 uint32
			x32, n = protowire.ConsumeFixed32(b)
			x = uint64(x32)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			bytes, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, typ, bytes, x); err != nil {
			return err
		}
	}
	return nil
}
