package pickle

import "fmt"

// The values Decode returns: int64, float64, bool, nil (None), string (str,
// bytes and unicode alike, as raw bytes), Tuple, *List, *Dict, *Global,
// *Object, and whatever a Hooks function returns.
type (
	// Tuple is a Python tuple.
	Tuple []any
	// List is a Python list; a pointer, so that a list can hold itself.
	List struct{ Items []any }
	// Dict is a Python dict whose keys keep their insertion order.
	Dict struct {
		keys []any
		m    map[any]any
	}
	// Global is a class or function reference (GLOBAL, STACK_GLOBAL).
	Global struct{ Module, Name string }
	// Object records a call (REDUCE, NEWOBJ) that no model handled: the
	// callable, its arguments and the state BUILD gave it.
	Object struct {
		Class *Global
		Args  Tuple
		State any
	}
)

// NewDict returns an empty dict.
func NewDict() *Dict { return &Dict{m: map[any]any{}} }

// Set stores d[k] = v; k must be hashable in this model: an int, float,
// bool, None, string or class reference (no tuples, no containers).
func (d *Dict) Set(k, v any) error {
	switch k.(type) {
	case int64, string, bool, nil, float64, *Global:
	default:
		return fmt.Errorf("unsupported dict key of type %s", TypeName(k))
	}
	if _, ok := d.m[k]; !ok {
		d.keys = append(d.keys, k)
	}
	d.m[k] = v
	return nil
}

// Get returns d[k].
func (d *Dict) Get(k any) (any, bool) {
	v, ok := d.m[k]
	return v, ok
}

// Keys returns the keys in insertion order; the caller must not change it.
func (d *Dict) Keys() []any { return d.keys }

// TypeName names the Python type of a decoded value, for messages (values
// may be cyclic, so they are never printed).
func TypeName(v any) string {
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
	case Tuple:
		return "tuple"
	case *List:
		return "list"
	case *Dict:
		return "dict"
	case *Global:
		return "class " + x.Module + "." + x.Name
	case *Object:
		return x.Class.Module + "." + x.Class.Name + " object"
	}
	return fmt.Sprintf("%T", v)
}
