package pickle

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/fanout-gnn/fanout/internal/quote"
)

// stepContainer handles tuples, lists and dicts.
func (u *machine) stepContainer(op byte) (bool, error) {
	switch op {
	case ')': // EMPTY_TUPLE
		u.push(Tuple{})
	case 0x85, 0x86, 0x87: // TUPLE1, TUPLE2, TUPLE3
		items, err := u.popN(int(op - 0x84))
		if err != nil {
			return true, err
		}
		u.push(Tuple(items))
	case 't': // TUPLE
		items, err := u.popMark()
		if err != nil {
			return true, err
		}
		u.push(Tuple(items))
	case ']': // EMPTY_LIST
		u.push(&List{})
	case 'l': // LIST
		items, err := u.popMark()
		if err != nil {
			return true, err
		}
		u.push(&List{Items: items})
	case 'a', 'e': // APPEND, APPENDS
		return true, u.appendItems(op == 'e')
	case '}': // EMPTY_DICT
		u.push(NewDict())
	case 'd': // DICT
		items, err := u.popMark()
		if err != nil {
			return true, err
		}
		d := NewDict()
		if err := setPairs(d, items); err != nil {
			return true, err
		}
		u.push(d)
	case 's', 'u': // SETITEM, SETITEMS
		return true, u.setItems(op == 'u')
	default:
		return false, nil
	}
	return true, nil
}

// popItems pops the values since MARK (many) or the last n.
func (u *machine) popItems(many bool, n int) ([]any, error) {
	if many {
		return u.popMark()
	}
	return u.popN(n)
}

// appendItems appends one value (APPEND) or the values since MARK (APPENDS)
// to the list below them.
func (u *machine) appendItems(many bool) error {
	items, err := u.popItems(many, 1)
	if err != nil {
		return err
	}
	target, err := u.top()
	if err != nil {
		return err
	}
	l, ok := target.(*List)
	if !ok {
		return fmt.Errorf("appending to a %s, want a list", TypeName(target))
	}
	l.Items = append(l.Items, items...)
	return nil
}

// setItems stores one key/value pair (SETITEM) or the pairs since MARK
// (SETITEMS) into the dict below them.
func (u *machine) setItems(many bool) error {
	items, err := u.popItems(many, 2)
	if err != nil {
		return err
	}
	target, err := u.top()
	if err != nil {
		return err
	}
	d, ok := target.(*Dict)
	if !ok {
		return fmt.Errorf("setting items of a %s, want a dict", TypeName(target))
	}
	return setPairs(d, items)
}

// setPairs stores alternating keys and values into d.
func setPairs(d *Dict, items []any) error {
	if len(items)%2 != 0 {
		return fmt.Errorf("odd number (%d) of dict keys and values", len(items))
	}
	for i := 0; i < len(items); i += 2 {
		if err := d.Set(items[i], items[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// stepMemo handles the memo: PUT/GET and their binary forms, and MEMOIZE.
func (u *machine) stepMemo(op byte) (bool, error) {
	var idx int64
	switch op {
	case 'p', 'g': // PUT, GET with a text index
		line, err := u.line()
		if err != nil {
			return true, err
		}
		if idx, err = strconv.ParseInt(line, 10, 64); err != nil {
			return true, fmt.Errorf("bad memo index %s", quote.Quote(line))
		}
	case 'q', 'h': // BINPUT, BINGET
		b, err := u.read(1)
		if err != nil {
			return true, err
		}
		idx = int64(b[0])
	case 'r', 'j': // LONG_BINPUT, LONG_BINGET
		b, err := u.read(4)
		if err != nil {
			return true, err
		}
		idx = int64(binary.LittleEndian.Uint32(b))
	case 0x94: // MEMOIZE
		idx = int64(len(u.memo))
	default:
		return false, nil
	}
	switch op {
	case 'g', 'h', 'j':
		v, ok := u.memo[idx]
		if !ok {
			return true, fmt.Errorf("memo entry %d is not set", idx)
		}
		u.push(v)
	default:
		v, err := u.top()
		if err != nil {
			return true, err
		}
		u.memo[idx] = v
	}
	return true, nil
}
