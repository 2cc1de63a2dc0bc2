package torchzip

import (
	"fmt"
)

// The machine below decodes the opcodes torch.save's pickle (protocol 2)
// uses for a dict of tensors. A class reference (GLOBAL) must be one of the
// names in call; a persistent id (BINPERSID) must name a storage of the
// archive. Every length is checked against the bytes that remain and
// every stack access against the stack.

type (
	tuple  []any
	global struct{ module, name string }
	dict   struct {
		keys []string // insertion order
		m    map[string]any
	}
)

func newDict() *dict { return &dict{m: map[string]any{}} }

// set stores d[k] = v; the dicts of a tensor file have string keys.
func (d *dict) set(k, v any) error {
	key, ok := k.(string)
	if !ok {
		return fmt.Errorf("dict key is a %s, want a string", typeName(k))
	}
	if _, seen := d.m[key]; !seen {
		d.keys = append(d.keys, key)
	}
	d.m[key] = v
	return nil
}

// machine is the pickle machine's state.
type machine struct {
	data  []byte
	pos   int
	stack []any
	marks []int
	memo  map[int64]any
	store *storages
}

// unpickle decodes the value pickled in data.
func unpickle(data []byte, store *storages) (any, error) {
	m := &machine{data: data, memo: map[int64]any{}, store: store}
	for m.pos < len(m.data) {
		at := m.pos
		op := m.data[at]
		m.pos++
		if op == '.' { // STOP
			if len(m.stack) != 1 || len(m.marks) != 0 {
				return nil, fmt.Errorf("pickle stops at byte %d with %d values and %d marks on the stack, want 1 value", at, len(m.stack), len(m.marks))
			}
			return m.stack[0], nil
		}
		if err := m.step(op); err != nil {
			return nil, fmt.Errorf("pickle opcode 0x%02x at byte %d: %w", op, at, err)
		}
	}
	return nil, fmt.Errorf("pickle of %d bytes ends without STOP (truncated?)", len(data))
}

// step runs one opcode.
func (m *machine) step(op byte) error {
	switch op {
	case 0x80: // PROTO
		b, err := m.take(1)
		if err == nil && b[0] > 5 {
			err = fmt.Errorf("pickle protocol %d is not supported", b[0])
		}
		return err
	case '(': // MARK
		m.marks = append(m.marks, len(m.stack))
		return nil
	case 'N':
		m.stack = append(m.stack, nil)
		return nil
	case 0x88, 0x89: // NEWTRUE, NEWFALSE
		m.stack = append(m.stack, op == 0x88)
		return nil
	case 'K', 'M', 'J', 0x8a: // BININT1, BININT2, BININT, LONG1
		return m.integer(op)
	case 'X', 0x8c: // BINUNICODE, SHORT_BINUNICODE
		return m.text(op == 'X')
	case 'q', 'r', 'h', 'j': // BINPUT, LONG_BINPUT, BINGET, LONG_BINGET
		return m.memoOp(op)
	}
	return m.stepStructure(op)
}

// stepStructure runs the opcodes that build containers and objects.
func (m *machine) stepStructure(op byte) error {
	switch op {
	case ')': // EMPTY_TUPLE
		m.stack = append(m.stack, tuple{})
	case 0x85, 0x86, 0x87: // TUPLE1..3
		items, err := m.popN(int(op - 0x84))
		if err != nil {
			return err
		}
		m.stack = append(m.stack, tuple(items))
	case 't': // TUPLE
		items, err := m.popToMark()
		if err != nil {
			return err
		}
		m.stack = append(m.stack, tuple(items))
	case '}': // EMPTY_DICT
		m.stack = append(m.stack, newDict())
	case 's', 'u': // SETITEM, SETITEMS
		return m.setItems(op == 'u')
	case 'c': // GLOBAL
		return m.global()
	case 'Q': // BINPERSID
		pid, err := m.popN(1)
		if err != nil {
			return err
		}
		st, err := m.store.load(pid[0])
		if err != nil {
			return err
		}
		m.stack = append(m.stack, st)
	case 'R': // REDUCE
		fa, err := m.popN(2)
		if err != nil {
			return err
		}
		v, err := m.call(fa[0], fa[1])
		if err != nil {
			return err
		}
		m.stack = append(m.stack, v)
	default:
		return fmt.Errorf("opcode not supported in a tensor file")
	}
	return nil
}

// littleEndian decodes an unsigned little-endian integer of up to 8 bytes.
func littleEndian(b []byte) uint64 {
	var v uint64
	for i := range b {
		v |= uint64(b[i]) << (8 * i)
	}
	return v
}

// take consumes n bytes.
func (m *machine) take(n int) ([]byte, error) {
	if n < 0 || n > len(m.data)-m.pos {
		return nil, fmt.Errorf("wants %d bytes but %d remain (truncated?)", n, len(m.data)-m.pos)
	}
	b := m.data[m.pos : m.pos+n]
	m.pos += n
	return b, nil
}

// floor is the lowest stack index an opcode may pop: the last mark.
func (m *machine) floor() int {
	if len(m.marks) == 0 {
		return 0
	}
	return m.marks[len(m.marks)-1]
}

// popN pops the top n values, in stack order.
func (m *machine) popN(n int) ([]any, error) {
	if len(m.stack)-n < m.floor() {
		return nil, fmt.Errorf("wants %d values but the stack holds %d above its mark", n, len(m.stack)-m.floor())
	}
	items := append([]any(nil), m.stack[len(m.stack)-n:]...)
	m.stack = m.stack[:len(m.stack)-n]
	return items, nil
}

// popToMark pops the values above the last mark and the mark.
func (m *machine) popToMark() ([]any, error) {
	if len(m.marks) == 0 {
		return nil, fmt.Errorf("no mark on the stack")
	}
	at := m.floor()
	m.marks = m.marks[:len(m.marks)-1]
	items := append([]any(nil), m.stack[at:]...)
	m.stack = m.stack[:at]
	return items, nil
}

// integer pushes a BININT1, BININT2, BININT or LONG1 value.
func (m *machine) integer(op byte) error {
	n := map[byte]int{'K': 1, 'M': 2, 'J': 4}[op]
	if op == 0x8a {
		b, err := m.take(1)
		if err != nil {
			return err
		}
		if n = int(b[0]); n > 8 {
			return fmt.Errorf("integer of %d bytes does not fit 64 bits", n)
		}
	}
	b, err := m.take(n)
	if err != nil {
		return err
	}
	v := littleEndian(b)
	signed := op == 'J' || op == 0x8a
	if signed && n > 0 && n < 8 && b[n-1]&0x80 != 0 {
		v |= ^uint64(0) << (8 * n)
	}
	m.stack = append(m.stack, int64(v))
	return nil
}

// text pushes a string with a 4-byte (BINUNICODE) or 1-byte length.
func (m *machine) text(long bool) error {
	width := map[bool]int{false: 1, true: 4}[long]
	b, err := m.take(width)
	if err != nil {
		return err
	}
	n := int(littleEndian(b))
	s, err := m.take(n)
	if err != nil {
		return err
	}
	m.stack = append(m.stack, string(s))
	return nil
}

// memoOp stores the top of the stack in the memo or pushes a memo entry.
func (m *machine) memoOp(op byte) error {
	width := map[bool]int{false: 1, true: 4}[op == 'r' || op == 'j']
	b, err := m.take(width)
	if err != nil {
		return err
	}
	idx := int64(littleEndian(b))
	if op == 'h' || op == 'j' {
		v, ok := m.memo[idx]
		if !ok {
			return fmt.Errorf("memo entry %d is not set", idx)
		}
		m.stack = append(m.stack, v)
		return nil
	}
	if len(m.stack) == m.floor() {
		return fmt.Errorf("nothing on the stack to memoize")
	}
	m.memo[idx] = m.stack[len(m.stack)-1]
	return nil
}

// setItems stores one pair (SETITEM) or the pairs above the mark
// (SETITEMS) into the dict below them.
func (m *machine) setItems(many bool) error {
	pop := func() ([]any, error) { return m.popN(2) }
	if many {
		pop = m.popToMark
	}
	items, err := pop()
	if err != nil {
		return err
	}
	if len(items)%2 != 0 {
		return fmt.Errorf("%d values: keys and values do not pair up", len(items))
	}
	if len(m.stack) == m.floor() {
		return fmt.Errorf("no dict below the items")
	}
	d, ok := m.stack[len(m.stack)-1].(*dict)
	if !ok {
		return fmt.Errorf("setting items of a %s, want a dict", typeName(m.stack[len(m.stack)-1]))
	}
	for i := 0; i < len(items); i += 2 {
		if err := d.set(items[i], items[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// global pushes a class reference "module\nname\n", which must be one the
// machine knows.
func (m *machine) global() error {
	var parts [2]string
	for i := range parts {
		end := m.pos
		for end < len(m.data) && m.data[end] != '\n' && end-m.pos < 256 {
			end++
		}
		if end >= len(m.data) || m.data[end] != '\n' {
			return fmt.Errorf("class reference without its line end (truncated?)")
		}
		parts[i] = string(m.data[m.pos:end])
		m.pos = end + 1
	}
	g := &global{module: parts[0], name: parts[1]}
	_, isStorage := storageClass(g.name)
	known := (g.module == "torch._utils" && g.name == "_rebuild_tensor_v2") ||
		(g.module == "collections" && g.name == "OrderedDict") ||
		(g.module == "torch" && isStorage)
	if !known {
		return fmt.Errorf("class %.100s.%.100s is not allowed in a tensor file (want torch._utils._rebuild_tensor_v2, collections.OrderedDict or a torch storage class)", g.module, g.name)
	}
	m.stack = append(m.stack, g)
	return nil
}

// call models REDUCE on the machine's known callables: an empty
// OrderedDict (a tensor's backward hooks) and a tensor's rebuild.
func (m *machine) call(fn, argv any) (any, error) {
	g, ok := fn.(*global)
	if !ok {
		return nil, fmt.Errorf("calling a %s, want a class or function reference", typeName(fn))
	}
	args, ok := argv.(tuple)
	if !ok {
		return nil, fmt.Errorf("arguments are a %s, want a tuple", typeName(argv))
	}
	switch g.name {
	case "OrderedDict":
		if len(args) != 0 {
			return nil, fmt.Errorf("OrderedDict with %d arguments, want none", len(args))
		}
		return newDict(), nil
	case "_rebuild_tensor_v2":
		return m.store.rebuildTensor(args)
	}
	return nil, fmt.Errorf("%s.%s is a storage class, not a callable", g.module, g.name)
}

// typeName names a decoded value's type, for messages.
func typeName(v any) string {
	if g, ok := v.(*global); ok {
		return "class " + g.module + "." + g.name
	}
	t := fmt.Sprintf("%T", v)
	names := map[string]string{"<nil>": "None", "int64": "int", "torchzip.tuple": "tuple",
		"*torchzip.dict": "dict", "*torchzip.storage": "storage", "*torchzip.Tensor": "tensor"}
	if n, ok := names[t]; ok {
		return n
	}
	return t
}
