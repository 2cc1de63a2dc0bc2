// Package npy reads and writes NumPy's .npy array format (versions 1.0, 2.0
// and 3.0): a magic string, a version, a Python-dict header giving dtype,
// memory order and shape, then the raw elements. Arrays come back as plain Go
// slices ([]float32, []int64, ...) in C (row-major) order; Map returns them
// zero-copy from a read-only memory mapping.
package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// magic opens every .npy file.
const magic = "\x93NUMPY"

// maxHeaderLen bounds the dict header we accept (NumPy itself writes < 1 KiB).
const maxHeaderLen = 1 << 20

// Header is the parsed preamble of a .npy file.
type Header struct {
	Descr        string  // dtype descriptor as written, e.g. "<f4"
	FortranOrder bool    // column-major data
	Shape        []int64 // dimensions; empty for a scalar
	DataOffset   int64   // bytes from the start of the file to the first element
}

// NumElements is the product of Shape (1 for a scalar), or an error when it
// overflows int64.
func (h Header) NumElements() (int64, error) {
	n := int64(1)
	for _, d := range h.Shape {
		if d < 0 {
			return 0, fmt.Errorf("negative dimension %d in shape %s", d, shapeString(h.Shape))
		}
		if d != 0 && n > math.MaxInt64/d {
			return 0, fmt.Errorf("shape %s has too many elements", shapeString(h.Shape))
		}
		n *= d
	}
	return n, nil
}

// ReadHeader reads the magic string, version and dict header from r, leaving
// r positioned at the first data byte.
func ReadHeader(r io.Reader) (Header, error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:8]); err != nil {
		return Header{}, fmt.Errorf("not a .npy file: %s", shortRead(err, "preamble"))
	}
	if string(pre[:6]) != magic {
		return Header{}, errors.New("not a .npy file: bad magic string")
	}
	major, minor := pre[6], pre[7]
	var hlen, off int64
	switch major {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return Header{}, fmt.Errorf("truncated: %s", shortRead(err, "header length"))
		}
		hlen, off = int64(binary.LittleEndian.Uint16(pre[8:10])), 10
	case 2, 3:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return Header{}, fmt.Errorf("truncated: %s", shortRead(err, "header length"))
		}
		hlen, off = int64(binary.LittleEndian.Uint32(l[:])), 12
	default:
		return Header{}, fmt.Errorf("unsupported .npy format version %d.%d", major, minor)
	}
	if minor != 0 {
		return Header{}, fmt.Errorf("unsupported .npy format version %d.%d", major, minor)
	}
	if hlen > maxHeaderLen {
		return Header{}, fmt.Errorf("header length %d exceeds the %d-byte limit", hlen, maxHeaderLen)
	}
	buf := make([]byte, hlen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return Header{}, fmt.Errorf("truncated: %s", shortRead(err, "header"))
	}
	h, err := parseDict(string(buf))
	if err != nil {
		return Header{}, fmt.Errorf("header: %w", err)
	}
	h.DataOffset = off + hlen
	return h, nil
}

// shortRead describes a failed ReadFull of part of the preamble.
func shortRead(err error, what string) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "file ends inside the " + what
	}
	return "reading " + what + ": " + err.Error()
}

// parseDict parses the Python dict literal of a .npy header, e.g.
// "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }" followed
// by space padding and a newline.
func parseDict(s string) (Header, error) {
	p := &dictParser{s: s}
	var h Header
	seen := map[string]bool{}
	if !p.eat('{') {
		return h, errors.New("does not start with '{'")
	}
	for !p.eat('}') {
		key, err := p.str()
		if err != nil {
			return h, fmt.Errorf("key: %w", err)
		}
		if seen[key] {
			return h, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		if !p.eat(':') {
			return h, fmt.Errorf("missing ':' after key %q", key)
		}
		switch key {
		case "descr":
			if p.peek() == '[' {
				return h, errors.New("structured dtypes are not supported")
			}
			h.Descr, err = p.str()
		case "fortran_order":
			h.FortranOrder, err = p.boolean()
		case "shape":
			h.Shape, err = p.tuple()
		default:
			return h, fmt.Errorf("unexpected key %q", key)
		}
		if err != nil {
			return h, fmt.Errorf("%s: %w", key, err)
		}
		if !p.eat(',') && p.peek() != '}' {
			return h, fmt.Errorf("expected ',' or '}' after %q", key)
		}
	}
	if rest := strings.TrimRight(p.s[p.i:], " \t\r\n\x00"); rest != "" {
		return h, fmt.Errorf("unexpected text after the dict: %q", clip(rest))
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("missing key %q", k)
		}
	}
	return h, nil
}

// dictParser is a cursor over the header text.
type dictParser struct {
	s string
	i int
}

func (p *dictParser) skipSpace() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (p *dictParser) peek() byte {
	p.skipSpace()
	if p.i >= len(p.s) {
		return 0
	}
	return p.s[p.i]
}

// eat consumes c if it is the next non-space byte.
func (p *dictParser) eat(c byte) bool {
	if p.peek() == c && c != 0 {
		p.i++
		return true
	}
	return false
}

// str parses a single- or double-quoted string without escapes.
func (p *dictParser) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", errors.New("expected a quoted string")
	}
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	if strings.IndexByte(v, '\\') >= 0 {
		return "", errors.New("escapes in strings are not supported")
	}
	p.i += end + 2
	return v, nil
}

// boolean parses True or False.
func (p *dictParser) boolean() (bool, error) {
	p.skipSpace()
	for _, w := range []string{"True", "False"} {
		if strings.HasPrefix(p.s[p.i:], w) {
			p.i += len(w)
			return w == "True", nil
		}
	}
	return false, errors.New("expected True or False")
}

// tuple parses a tuple of non-negative integers: (), (3,), (3, 4).
func (p *dictParser) tuple() ([]int64, error) {
	if !p.eat('(') {
		return nil, errors.New("expected a tuple")
	}
	dims := []int64{}
	for !p.eat(')') {
		if len(dims) > 64 {
			return nil, errors.New("more than 64 dimensions")
		}
		p.skipSpace()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		d, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bad dimension %q", clip(p.s[p.i:min(j+1, len(p.s))]))
		}
		p.i = j
		if p.i < len(p.s) && p.s[p.i] == 'L' { // Python 2 long suffix
			p.i++
		}
		dims = append(dims, d)
		if !p.eat(',') && p.peek() != ')' {
			return nil, errors.New("expected ',' or ')' in tuple")
		}
	}
	return dims, nil
}

// clip shortens text quoted in an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// shapeString renders a shape as "1000x100" ("scalar" for no dimensions).
func shapeString(shape []int64) string {
	if len(shape) == 0 {
		return "scalar"
	}
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return strings.Join(parts, "x")
}

// formatHeader renders the full preamble (magic through padding) for an array
// with the given descriptor and C-order shape, padded to a multiple of 64 bytes.
func formatHeader(descr string, shape []int64) []byte {
	var dims strings.Builder
	dims.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			dims.WriteString(", ")
		}
		dims.WriteString(strconv.FormatInt(d, 10))
	}
	if len(shape) == 1 {
		dims.WriteByte(',')
	}
	dims.WriteByte(')')
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, dims.String())
	pre, lenBytes := []byte(magic+"\x01\x00"), 2
	if len(dict)+1+10 > math.MaxUint16 {
		pre, lenBytes = []byte(magic+"\x02\x00"), 4
	}
	total := len(pre) + lenBytes + len(dict) + 1
	pad := (64 - total%64) % 64
	hlen := len(dict) + pad + 1
	out := make([]byte, 0, total+pad)
	out = append(out, pre...)
	if lenBytes == 2 {
		out = binary.LittleEndian.AppendUint16(out, uint16(hlen))
	} else {
		out = binary.LittleEndian.AppendUint32(out, uint32(hlen))
	}
	out = append(out, dict...)
	out = append(out, strings.Repeat(" ", pad)...)
	return append(out, '\n')
}
