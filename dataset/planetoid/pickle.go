package planetoid

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// The pickle machine below decodes the subset of Python's pickle format
// (protocols 0-4) that NumPy arrays, SciPy sparse matrices and plain
// containers use. It never executes anything: a class reference (GLOBAL)
// becomes a *pyGlobal, and calling it (REDUCE, NEWOBJ) records a *pyObject
// whose meaning the decoders in pyobj.go interpret. Every length is checked
// against the bytes that remain, so a corrupt file cannot ask for more
// memory than its own size, and every stack access is checked.

// Python values: int64, float64, bool, nil (None), string (str, bytes and
// unicode alike, as raw bytes), pyTuple, *pyList, *pyDict, *pyGlobal,
// *pyObject.
type (
	pyTuple []any
	pyList  struct{ items []any }
	pyDict  struct {
		keys []any // insertion order
		m    map[any]any
	}
	pyGlobal struct{ module, name string }
	pyObject struct {
		class *pyGlobal
		args  pyTuple
		state any // set by BUILD
	}
)

func newDict() *pyDict { return &pyDict{m: map[any]any{}} }

// set stores d[k] = v; k must be hashable in our model (no tuples of
// containers, no lists).
func (d *pyDict) set(k, v any) error {
	switch k.(type) {
	case int64, string, bool, nil, float64, *pyGlobal:
	default:
		return fmt.Errorf("unsupported dict key of type %s", typeName(k))
	}
	if _, ok := d.m[k]; !ok {
		d.keys = append(d.keys, k)
	}
	d.m[k] = v
	return nil
}

// get returns d[k].
func (d *pyDict) get(k any) (any, bool) {
	v, ok := d.m[k]
	return v, ok
}

// unpickler is the machine's state.
type unpickler struct {
	data  []byte
	pos   int
	stack []any
	marks []int
	memo  map[int64]any
}

// unpickle decodes one pickled value from data.
func unpickle(data []byte) (any, error) {
	u := &unpickler{data: data, memo: map[int64]any{}}
	for {
		if u.pos >= len(u.data) {
			return nil, fmt.Errorf("pickle ends without STOP (truncated?)")
		}
		op := u.data[u.pos]
		at := u.pos
		u.pos++
		if op == '.' { // STOP
			if len(u.stack) != 1 {
				return nil, fmt.Errorf("STOP at byte %d with %d values on the stack, want 1", at, len(u.stack))
			}
			return u.stack[0], nil
		}
		if err := u.step(op); err != nil {
			return nil, fmt.Errorf("pickle opcode %s at byte %d: %w", opName(op), at, err)
		}
	}
}

// opName renders an opcode for messages.
func opName(op byte) string {
	if op >= 0x20 && op < 0x7f {
		return strconv.QuoteRune(rune(op))
	}
	return fmt.Sprintf("0x%02x", op)
}

// step executes one opcode.
func (u *unpickler) step(op byte) error {
	switch op {
	case 0x80: // PROTO
		p, err := u.read(1)
		if err != nil {
			return err
		}
		if p[0] > 5 {
			return fmt.Errorf("unsupported pickle protocol %d", p[0])
		}
		return nil
	case 0x95: // FRAME: an 8-byte length; frames are just a read hint
		_, err := u.read(8)
		return err
	case '(': // MARK
		u.marks = append(u.marks, len(u.stack))
		return nil
	case '0': // POP
		_, err := u.pop()
		return err
	case '1': // POP_MARK
		_, err := u.popMark()
		return err
	case '2': // DUP
		v, err := u.top()
		if err != nil {
			return err
		}
		u.push(v)
		return nil
	}
	if done, err := u.stepScalar(op); done {
		return err
	}
	if done, err := u.stepContainer(op); done {
		return err
	}
	if done, err := u.stepMemo(op); done {
		return err
	}
	if done, err := u.stepObject(op); done {
		return err
	}
	return fmt.Errorf("unsupported opcode")
}

// stepScalar handles opcodes that push numbers, strings, booleans and None.
func (u *unpickler) stepScalar(op byte) (bool, error) {
	switch op {
	case 'N': // NONE
		u.push(nil)
	case 0x88: // NEWTRUE
		u.push(true)
	case 0x89: // NEWFALSE
		u.push(false)
	case 'K': // BININT1
		b, err := u.read(1)
		if err != nil {
			return true, err
		}
		u.push(int64(b[0]))
	case 'M': // BININT2
		b, err := u.read(2)
		if err != nil {
			return true, err
		}
		u.push(int64(binary.LittleEndian.Uint16(b)))
	case 'J': // BININT
		b, err := u.read(4)
		if err != nil {
			return true, err
		}
		u.push(int64(int32(binary.LittleEndian.Uint32(b))))
	case 0x8a, 0x8b: // LONG1, LONG4
		return true, u.long(op == 0x8b)
	case 'G': // BINFLOAT, big-endian
		b, err := u.read(8)
		if err != nil {
			return true, err
		}
		u.push(math.Float64frombits(binary.BigEndian.Uint64(b)))
	case 'I', 'L', 'F': // INT, LONG, FLOAT as text lines
		return true, u.textNumber(op)
	case 'T', 'B', 'X': // BINSTRING, BINBYTES, BINUNICODE: 4-byte length
		return true, u.counted(4)
	case 'U', 'C', 0x8c: // SHORT_BINSTRING, SHORT_BINBYTES, SHORT_BINUNICODE
		return true, u.counted(1)
	case 0x8d, 0x8e: // BINUNICODE8, BINBYTES8
		return true, u.counted(8)
	default:
		return false, nil
	}
	return true, nil
}

// counted pushes a string preceded by a little-endian length of n bytes.
func (u *unpickler) counted(n int) error {
	b, err := u.read(n)
	if err != nil {
		return err
	}
	var size uint64
	switch n {
	case 1:
		size = uint64(b[0])
	case 4:
		size = uint64(binary.LittleEndian.Uint32(b))
	default:
		size = binary.LittleEndian.Uint64(b)
	}
	if size > uint64(len(u.data)-u.pos) {
		return fmt.Errorf("string of %d bytes but only %d bytes remain (truncated?)", size, len(u.data)-u.pos)
	}
	s, _ := u.read(int(size))
	u.push(string(s))
	return nil
}

// long pushes a little-endian two's complement integer (LONG1 or LONG4).
func (u *unpickler) long(four bool) error {
	n := 1
	if four {
		n = 4
	}
	b, err := u.read(n)
	if err != nil {
		return err
	}
	size := uint64(b[0])
	if four {
		size = uint64(binary.LittleEndian.Uint32(b))
	}
	if size > 8 {
		return fmt.Errorf("integer of %d bytes does not fit int64", size)
	}
	raw, err := u.read(int(size))
	if err != nil {
		return err
	}
	var v uint64
	for i := len(raw) - 1; i >= 0; i-- {
		v = v<<8 | uint64(raw[i])
	}
	if size > 0 && size < 8 && raw[size-1]&0x80 != 0 { // sign-extend
		v |= ^uint64(0) << (8 * size)
	}
	u.push(int64(v))
	return nil
}

// textNumber handles INT ("I42\n", "I01\n" = True), LONG ("L42L\n") and
// FLOAT ("F1.5\n").
func (u *unpickler) textNumber(op byte) error {
	line, err := u.line()
	if err != nil {
		return err
	}
	switch op {
	case 'I':
		switch line {
		case "01":
			u.push(true)
			return nil
		case "00":
			u.push(false)
			return nil
		}
	case 'L':
		line = strings.TrimSuffix(line, "L")
	case 'F':
		f, err := strconv.ParseFloat(line, 64)
		if err != nil {
			return fmt.Errorf("bad float %q", line)
		}
		u.push(f)
		return nil
	}
	v, ok := new(big.Int).SetString(line, 10)
	if !ok || !v.IsInt64() {
		return fmt.Errorf("bad or too large integer %q", line)
	}
	u.push(v.Int64())
	return nil
}

// read consumes n bytes.
func (u *unpickler) read(n int) ([]byte, error) {
	if n < 0 || n > len(u.data)-u.pos {
		return nil, fmt.Errorf("unexpected end of data (truncated?)")
	}
	b := u.data[u.pos : u.pos+n]
	u.pos += n
	return b, nil
}

// line consumes a text argument up to '\n' (not included).
func (u *unpickler) line() (string, error) {
	for i := u.pos; i < len(u.data); i++ {
		if u.data[i] == '\n' {
			s := string(u.data[u.pos:i])
			u.pos = i + 1
			return s, nil
		}
	}
	return "", fmt.Errorf("unexpected end of data in a text argument (truncated?)")
}

func (u *unpickler) push(v any) { u.stack = append(u.stack, v) }

func (u *unpickler) pop() (any, error) {
	n := len(u.stack)
	if n == 0 || (len(u.marks) > 0 && u.marks[len(u.marks)-1] == n) {
		return nil, fmt.Errorf("stack underflow")
	}
	v := u.stack[n-1]
	u.stack = u.stack[:n-1]
	return v, nil
}

func (u *unpickler) top() (any, error) {
	n := len(u.stack)
	if n == 0 || (len(u.marks) > 0 && u.marks[len(u.marks)-1] == n) {
		return nil, fmt.Errorf("stack underflow")
	}
	return u.stack[n-1], nil
}

// popMark removes and returns the values pushed since the last MARK.
func (u *unpickler) popMark() ([]any, error) {
	if len(u.marks) == 0 {
		return nil, fmt.Errorf("no MARK on the stack")
	}
	m := u.marks[len(u.marks)-1]
	u.marks = u.marks[:len(u.marks)-1]
	items := append([]any(nil), u.stack[m:]...)
	u.stack = u.stack[:m]
	return items, nil
}

// decodeLatin1 turns text (UTF-8, as BINUNICODE stores it) whose runes are all
// below 256 into the bytes they stand for: Python 3 pickles bytes at
// protocol 2 as _codecs.encode(text, 'latin1').
func decodeLatin1(s string) (string, error) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff { // also catches utf8.RuneError (invalid UTF-8)
			return "", fmt.Errorf("character %U is not latin-1", r)
		}
		out = append(out, byte(r))
	}
	return string(out), nil
}
