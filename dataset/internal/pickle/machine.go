// Package pickle decodes Python pickles (the opcodes of protocols 0-4; a
// pickle may declare protocol 5) into plain Go values, for the importers of files that
// Python wrote: the Planetoid datasets' NumPy and SciPy pickles and
// torch.save's data.pkl. It never executes anything: a class reference
// (GLOBAL) becomes a *Global, and calling it (REDUCE, NEWOBJ) records an
// *Object unless a model handles it. Every length is checked against the
// bytes that remain, so a corrupt file cannot ask for more memory than its
// own size, and every stack access is checked against the stack and its
// last MARK. Hooks adapt the machine to a format: they vet opcodes and
// class references, model calls and resolve persistent ids.
package pickle

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/internal/quote"
)

// Hooks adapt the machine to a file format. The zero value accepts every
// opcode and class reference, models only the callables Python's own
// pickles use (defaultdict, copy_reg._reconstructor, _codecs.encode) and
// refuses persistent ids.
type Hooks struct {
	// Opcode, when set, vets each opcode (STOP included) before it runs.
	Opcode func(op byte) error
	// Global, when set, vets a class reference as GLOBAL or STACK_GLOBAL
	// reads it.
	Global func(g *Global) error
	// Call, when set, may model REDUCE or NEWOBJ of g on args; with handled
	// false (and no error) the call goes to the built-in models and, failing
	// those, becomes an *Object.
	Call func(g *Global, args Tuple) (v any, handled bool, err error)
	// Persistent, when set, resolves the id of PERSID (a string) or
	// BINPERSID (any value); without it a persistent id is an error.
	Persistent func(pid any) (any, error)
}

// machine is the decoder's state: the bytes, the stack, the marks and the
// memo.
type machine struct {
	data  []byte
	pos   int
	stack []any
	marks []int
	memo  map[int64]any
	hooks Hooks
}

// Decode decodes the one value pickled in data.
func Decode(data []byte, hooks Hooks) (any, error) {
	u := &machine{data: data, memo: map[int64]any{}, hooks: hooks}
	for u.pos < len(u.data) {
		at := u.pos
		op := u.data[at]
		u.pos++
		var err error
		if u.hooks.Opcode != nil {
			err = u.hooks.Opcode(op)
		}
		if err == nil && op == '.' { // STOP
			if len(u.stack) != 1 || len(u.marks) != 0 {
				return nil, fmt.Errorf("STOP at byte %d with %d values on the stack and %d marks, want 1 value and no mark", at, len(u.stack), len(u.marks))
			}
			return u.stack[0], nil
		}
		if err == nil {
			err = u.step(op)
		}
		if err != nil {
			return nil, fmt.Errorf("pickle opcode %s at byte %d: %w", opName(op), at, err)
		}
	}
	return nil, fmt.Errorf("pickle of %d bytes ends without STOP (truncated?)", len(data))
}

// opName renders an opcode for messages.
func opName(op byte) string {
	if op >= 0x20 && op < 0x7f {
		return strconv.QuoteRune(rune(op))
	}
	return fmt.Sprintf("0x%02x", op)
}

// step executes one opcode.
func (u *machine) step(op byte) error {
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
func (u *machine) stepScalar(op byte) (bool, error) {
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
func (u *machine) counted(n int) error {
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
func (u *machine) long(four bool) error {
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
func (u *machine) textNumber(op byte) error {
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
			return fmt.Errorf("bad float %s", quote.Quote(line))
		}
		u.push(f)
		return nil
	}
	v, ok := new(big.Int).SetString(line, 10)
	if !ok || !v.IsInt64() {
		return fmt.Errorf("bad or too large integer %s", quote.Quote(line))
	}
	u.push(v.Int64())
	return nil
}

// read consumes n bytes.
func (u *machine) read(n int) ([]byte, error) {
	if n < 0 || n > len(u.data)-u.pos {
		return nil, fmt.Errorf("unexpected end of data (truncated?)")
	}
	b := u.data[u.pos : u.pos+n]
	u.pos += n
	return b, nil
}

// line consumes a text argument up to '\n' (not included).
func (u *machine) line() (string, error) {
	for i := u.pos; i < len(u.data); i++ {
		if u.data[i] == '\n' {
			s := string(u.data[u.pos:i])
			u.pos = i + 1
			return s, nil
		}
	}
	return "", fmt.Errorf("unexpected end of data in a text argument (truncated?)")
}

func (u *machine) push(v any) { u.stack = append(u.stack, v) }

func (u *machine) pop() (any, error) {
	n := len(u.stack)
	if n == 0 || (len(u.marks) > 0 && u.marks[len(u.marks)-1] == n) {
		return nil, fmt.Errorf("stack underflow")
	}
	v := u.stack[n-1]
	u.stack = u.stack[:n-1]
	return v, nil
}

func (u *machine) top() (any, error) {
	n := len(u.stack)
	if n == 0 || (len(u.marks) > 0 && u.marks[len(u.marks)-1] == n) {
		return nil, fmt.Errorf("stack underflow")
	}
	return u.stack[n-1], nil
}

// popN removes and returns the last n values, in the order they were
// pushed; they must lie above the last MARK.
func (u *machine) popN(n int) ([]any, error) {
	k := len(u.stack) - n
	if k < 0 || (len(u.marks) > 0 && u.marks[len(u.marks)-1] > k) {
		return nil, fmt.Errorf("stack underflow")
	}
	items := append([]any(nil), u.stack[k:]...)
	u.stack = u.stack[:k]
	return items, nil
}

// popMark removes and returns the values pushed since the last MARK.
func (u *machine) popMark() ([]any, error) {
	if len(u.marks) == 0 {
		return nil, fmt.Errorf("no MARK on the stack")
	}
	m := u.marks[len(u.marks)-1]
	u.marks = u.marks[:len(u.marks)-1]
	items := append([]any(nil), u.stack[m:]...)
	u.stack = u.stack[:m]
	return items, nil
}
