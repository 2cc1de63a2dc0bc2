// Package tensorboard writes TensorBoard event files: a stream of records
// (the data's length as a little-endian uint64, its masked CRC-32C, the
// data, the data's masked CRC-32C), each an Event protocol buffer
// (tensorflow/core/util/event.proto) holding a wall time, a step and a
// summary of scalar values. The protocol buffers are encoded with
// google.golang.org/protobuf's protowire; ReadScalars reads a file back.
package tensorboard

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of event.proto and summary.proto.
const (
	eventWallTime    = 1 // double
	eventStep        = 2 // int64
	eventFileVersion = 3 // string
	eventSummary     = 5 // Summary

	summaryValue = 1 // repeated Summary.Value

	valueTag    = 1 // string
	valueSimple = 2 // float
)

// fileVersion is the first event of every file, which readers check.
const fileVersion = "brain.Event:2"

// appendEventHead appends an Event's wall time (seconds since the Unix
// epoch) and step.
func appendEventHead(b []byte, wall float64, step int64) []byte {
	b = protowire.AppendTag(b, eventWallTime, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(wall))
	b = protowire.AppendTag(b, eventStep, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(step))
}

// versionEvent is the Event that opens a file.
func versionEvent(wall float64) []byte {
	b := appendEventHead(nil, wall, 0)
	b = protowire.AppendTag(b, eventFileVersion, protowire.BytesType)
	return protowire.AppendString(b, fileVersion)
}

// scalarEvent is an Event whose summary holds one simple_value.
func scalarEvent(b []byte, wall float64, step int64, tag string, value float32) []byte {
	var v []byte
	v = protowire.AppendTag(v, valueTag, protowire.BytesType)
	v = protowire.AppendString(v, tag)
	v = protowire.AppendTag(v, valueSimple, protowire.Fixed32Type)
	v = protowire.AppendFixed32(v, math.Float32bits(value))
	var s []byte
	s = protowire.AppendTag(s, summaryValue, protowire.BytesType)
	s = protowire.AppendBytes(s, v)
	b = appendEventHead(b, wall, step)
	b = protowire.AppendTag(b, eventSummary, protowire.BytesType)
	return protowire.AppendBytes(b, s)
}
