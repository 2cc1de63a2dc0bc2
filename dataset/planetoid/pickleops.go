package planetoid

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// stepContainer handles tuples, lists and dicts.
func (u *unpickler) stepContainer(op byte) (bool, error) {
	switch op {
	case ')': // EMPTY_TUPLE
		u.push(pyTuple{})
	case 0x85, 0x86, 0x87: // TUPLE1, TUPLE2, TUPLE3
		n := int(op - 0x84)
		if len(u.stack) < n || (len(u.marks) > 0 && u.marks[len(u.marks)-1] > len(u.stack)-n) {
			return true, fmt.Errorf("stack underflow")
		}
		t := append(pyTuple(nil), u.stack[len(u.stack)-n:]...)
		u.stack = u.stack[:len(u.stack)-n]
		u.push(t)
	case 't': // TUPLE
		items, err := u.popMark()
		if err != nil {
			return true, err
		}
		u.push(pyTuple(items))
	case ']': // EMPTY_LIST
		u.push(&pyList{})
	case 'l': // LIST
		items, err := u.popMark()
		if err != nil {
			return true, err
		}
		u.push(&pyList{items: items})
	case 'a', 'e': // APPEND, APPENDS
		return true, u.appendItems(op == 'e')
	case '}': // EMPTY_DICT
		u.push(newDict())
	case 'd': // DICT
		items, err := u.popMark()
		if err != nil {
			return true, err
		}
		d := newDict()
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

// appendItems appends one value (APPEND) or the values since MARK (APPENDS)
// to the list below them.
func (u *unpickler) appendItems(many bool) error {
	var items []any
	var err error
	if many {
		items, err = u.popMark()
	} else {
		var v any
		v, err = u.pop()
		items = []any{v}
	}
	if err != nil {
		return err
	}
	target, err := u.top()
	if err != nil {
		return err
	}
	l, ok := target.(*pyList)
	if !ok {
		return fmt.Errorf("appending to a %s, want a list", typeName(target))
	}
	l.items = append(l.items, items...)
	return nil
}

// setItems stores one key/value pair (SETITEM) or the pairs since MARK
// (SETITEMS) into the dict below them.
func (u *unpickler) setItems(many bool) error {
	var items []any
	if many {
		var err error
		if items, err = u.popMark(); err != nil {
			return err
		}
	} else {
		v, err := u.pop()
		if err != nil {
			return err
		}
		k, err := u.pop()
		if err != nil {
			return err
		}
		items = []any{k, v}
	}
	target, err := u.top()
	if err != nil {
		return err
	}
	d, ok := target.(*pyDict)
	if !ok {
		return fmt.Errorf("setting items of a %s, want a dict", typeName(target))
	}
	return setPairs(d, items)
}

// setPairs stores alternating keys and values into d.
func setPairs(d *pyDict, items []any) error {
	if len(items)%2 != 0 {
		return fmt.Errorf("odd number (%d) of dict keys and values", len(items))
	}
	for i := 0; i < len(items); i += 2 {
		if err := d.set(items[i], items[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// stepMemo handles the memo: PUT/GET and their binary forms, and MEMOIZE.
func (u *unpickler) stepMemo(op byte) (bool, error) {
	var idx int64
	switch op {
	case 'p', 'g': // PUT, GET with a text index
		line, err := u.line()
		if err != nil {
			return true, err
		}
		if idx, err = strconv.ParseInt(line, 10, 64); err != nil {
			return true, fmt.Errorf("bad memo index %q", line)
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

// stepObject handles class references and object construction.
func (u *unpickler) stepObject(op byte) (bool, error) {
	switch op {
	case 'c': // GLOBAL "module\nname\n"
		module, err := u.line()
		if err != nil {
			return true, err
		}
		name, err := u.line()
		if err != nil {
			return true, err
		}
		u.push(&pyGlobal{module: module, name: name})
	case 0x93: // STACK_GLOBAL
		name, err1 := u.pop()
		module, err2 := u.pop()
		if err1 != nil || err2 != nil {
			return true, fmt.Errorf("stack underflow")
		}
		m, ok1 := module.(string)
		n, ok2 := name.(string)
		if !ok1 || !ok2 {
			return true, fmt.Errorf("module and name must be strings")
		}
		u.push(&pyGlobal{module: m, name: n})
	case 'R', 0x81: // REDUCE: callable(*args); NEWOBJ: cls.__new__(cls, *args)
		argv, err := u.pop()
		if err != nil {
			return true, err
		}
		fn, err := u.pop()
		if err != nil {
			return true, err
		}
		args, ok := argv.(pyTuple)
		if !ok {
			return true, fmt.Errorf("arguments are a %s, want a tuple", typeName(argv))
		}
		g, ok := fn.(*pyGlobal)
		if !ok {
			return true, fmt.Errorf("calling a %s, want a class or function reference", typeName(fn))
		}
		v, err := call(g, args)
		if err != nil {
			return true, err
		}
		u.push(v)
	case 'b': // BUILD: obj.__setstate__(state)
		state, err := u.pop()
		if err != nil {
			return true, err
		}
		target, err := u.top()
		if err != nil {
			return true, err
		}
		o, ok := target.(*pyObject)
		if !ok {
			return true, fmt.Errorf("setting the state of a %s, want an object", typeName(target))
		}
		o.state = state
	default:
		return false, nil
	}
	return true, nil
}

// call models the few callables these pickles use: defaultdict(factory)
// gives an empty dict, copy_reg._reconstructor(cls, base, state) a bare
// object of cls, _codecs.encode(text, 'latin1') bytes; anything else is
// recorded as an object of that class with its arguments.
func call(g *pyGlobal, args pyTuple) (any, error) {
	switch {
	case g.module == "collections" && g.name == "defaultdict":
		return newDict(), nil
	case (g.module == "copy_reg" || g.module == "copyreg") && g.name == "_reconstructor":
		if len(args) < 1 {
			return nil, fmt.Errorf("_reconstructor needs a class")
		}
		cls, ok := args[0].(*pyGlobal)
		if !ok {
			return nil, fmt.Errorf("_reconstructor of a %s, want a class", typeName(args[0]))
		}
		return &pyObject{class: cls}, nil
	case g.module == "_codecs" && g.name == "encode":
		if len(args) != 2 {
			return nil, fmt.Errorf("_codecs.encode takes 2 arguments, have %d", len(args))
		}
		text, ok1 := args[0].(string)
		enc, ok2 := args[1].(string)
		if !ok1 || !ok2 || (enc != "latin1" && enc != "latin-1") {
			return nil, fmt.Errorf("unsupported _codecs.encode call")
		}
		return decodeLatin1(text)
	}
	return &pyObject{class: g, args: args}, nil
}

// typeName names the Python type of a decoded value, for messages (values
// may be cyclic, so they are never printed).
func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case int64:
		return "int"
	case float64:
		return "float"
	case bool:
		return "bool"
	case string:
		return "str"
	case pyTuple:
		return "tuple"
	case *pyList:
		return "list"
	case *pyDict:
		return "dict"
	case *pyGlobal:
		return "class " + x.module + "." + x.name
	case *pyObject:
		return x.class.module + "." + x.class.name + " object"
	}
	return fmt.Sprintf("%T", v)
}
