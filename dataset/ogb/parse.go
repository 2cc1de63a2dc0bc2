package ogb

import (
	"bytes"
	"math"
	"strconv"
)

// trim removes surrounding spaces and tabs.
func trim(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// parseInt parses a decimal integer with an optional sign; ok is false for
// anything else, including values outside int64.
func parseInt(b []byte) (v int64, ok bool) {
	b, neg := cutSign(trim(b))
	u, ok := digitsValue(b, 19)
	if !ok {
		return 0, false
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// cutSign removes a leading '-' or '+' from b; neg says it was '-'.
func cutSign(b []byte) (rest []byte, neg bool) {
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		return b[1:], b[0] == '-'
	}
	return b, false
}

// digitsValue is the value of b, 1 to most decimal digits (most <= 19, so
// that it fits a uint64); ok is false for anything else.
func digitsValue(b []byte, most int) (uint64, bool) {
	if len(b) == 0 || len(b) > most {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	return u, true
}

// parseFloat32 parses a finite decimal number, correctly rounded to float32:
// fastFloat32 for the common forms, strconv otherwise. The conversion of the
// field to a string does not escape, so it does not allocate for fields of up
// to 32 bytes.
func parseFloat32(b []byte) (float32, bool) {
	b = trim(b)
	if f, ok := fastFloat32(b); ok {
		return f, true
	}
	f, err := strconv.ParseFloat(string(b), 32)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return float32(f), true
}

// isMissing reports whether a label field marks an unlabelled vertex: empty
// or NaN (as pandas and numpy write it).
func isMissing(b []byte) bool {
	b = trim(b)
	return len(b) == 0 || bytes.EqualFold(b, []byte("nan"))
}

// parseLabel parses a class id written as an integer or as an integral
// float ("3.0"); ok is false otherwise.
func parseLabel(b []byte) (int64, bool) {
	if v, ok := parseInt(b); ok {
		return v, true
	}
	f, err := strconv.ParseFloat(string(trim(b)), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
		return 0, false
	}
	return int64(f), true
}
