package pickle

import "fmt"

// stepObject handles class references, persistent ids and object
// construction.
func (u *machine) stepObject(op byte) (bool, error) {
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
		return true, u.global(module, name)
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
		return true, u.global(m, n)
	case 'P', 'Q': // PERSID "id\n", BINPERSID: persistent_load(id)
		return true, u.persistent(op == 'Q')
	case 'R', 0x81: // REDUCE: callable(*args); NEWOBJ: cls.__new__(cls, *args)
		argv, err := u.pop()
		if err != nil {
			return true, err
		}
		fn, err := u.pop()
		if err != nil {
			return true, err
		}
		args, ok := argv.(Tuple)
		if !ok {
			return true, fmt.Errorf("arguments are a %s, want a tuple", TypeName(argv))
		}
		g, ok := fn.(*Global)
		if !ok {
			return true, fmt.Errorf("calling a %s, want a class or function reference", TypeName(fn))
		}
		v, err := u.call(g, args)
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
		o, ok := target.(*Object)
		if !ok {
			return true, fmt.Errorf("setting the state of a %s, want an object", TypeName(target))
		}
		o.State = state
	default:
		return false, nil
	}
	return true, nil
}

// global pushes a class reference once Hooks.Global accepts it.
func (u *machine) global(module, name string) error {
	g := &Global{Module: module, Name: name}
	if u.hooks.Global != nil {
		if err := u.hooks.Global(g); err != nil {
			return err
		}
	}
	u.push(g)
	return nil
}

// persistent pushes what Hooks.Persistent makes of a persistent id: a text
// line (PERSID) or the value on the stack (BINPERSID).
func (u *machine) persistent(binary bool) error {
	var pid any
	var err error
	if binary {
		pid, err = u.pop()
	} else {
		pid, err = u.line()
	}
	if err != nil {
		return err
	}
	if u.hooks.Persistent == nil {
		return fmt.Errorf("persistent id (a %s) in a pickle that has no persistent objects", TypeName(pid))
	}
	v, err := u.hooks.Persistent(pid)
	if err != nil {
		return err
	}
	u.push(v)
	return nil
}

// call models a call of g: first Hooks.Call, then the callables that
// Python's own pickles use (defaultdict(factory) gives an empty dict,
// copy_reg._reconstructor(cls, base, state) a bare object of cls,
// _codecs.encode(text, 'latin1') bytes); anything else is recorded as an
// object of that class with its arguments.
func (u *machine) call(g *Global, args Tuple) (any, error) {
	if u.hooks.Call != nil {
		if v, handled, err := u.hooks.Call(g, args); handled || err != nil {
			return v, err
		}
	}
	switch {
	case g.Module == "collections" && g.Name == "defaultdict":
		return NewDict(), nil
	case (g.Module == "copy_reg" || g.Module == "copyreg") && g.Name == "_reconstructor":
		if len(args) < 1 {
			return nil, fmt.Errorf("_reconstructor needs a class")
		}
		cls, ok := args[0].(*Global)
		if !ok {
			return nil, fmt.Errorf("_reconstructor of a %s, want a class", TypeName(args[0]))
		}
		return &Object{Class: cls}, nil
	case g.Module == "_codecs" && g.Name == "encode":
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
	return &Object{Class: g, Args: args}, nil
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
