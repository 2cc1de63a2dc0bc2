package pickle

import (
	"errors"
	"strings"
	"testing"

	"fmt"
	"github.com/fanout-gnn/fanout/internal/quote"
)

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "ends without STOP"},
		{"underflow", []byte{0x80, 2, 't'}, "no MARK"},
		{"pop past mark", []byte{0x80, 2, 'K', 1, '(', '0'}, "stack underflow"},
		{"odd setitems", []byte{0x80, 2, '}', '(', 'K', 1, 'u', '.'}, "odd number"},
		{"unhashable key", []byte{0x80, 2, '}', ']', 'K', 1, 's', '.'}, "unsupported dict key of type list"},
		{"long string", []byte{0x80, 2, 'T', 0xff, 0xff, 0xff, 0x7f, 'a'}, "only 1 bytes remain"},
		{"memo", []byte{0x80, 2, 'h', 9, '.'}, "memo entry 9 is not set"},
		{"append to int", []byte{0x80, 2, 'K', 1, 'K', 2, 'a', '.'}, "appending to a int"},
		{"reduce non-callable", []byte{0x80, 2, 'K', 1, ')', 'R', '.'}, "calling a int"},
		{"two values at stop", []byte{0x80, 2, 'K', 1, 'K', 1, '.'}, "2 values on the stack"},
		{"mark at stop", []byte{0x80, 2, '(', 'K', 1, '.'}, "1 marks, want 1 value and no mark"},
		{"protocol", []byte{0x80, 9, '.'}, "unsupported pickle protocol 9"},
		{"huge long", []byte{0x80, 2, 0x8a, 9, 0, 0, 0, 0, 0, 0, 0, 0, 1, '.'}, "does not fit int64"},
		{"persistent id", []byte{0x80, 2, 'K', 1, 'Q', '.'}, "persistent id (a int) in a pickle that has no persistent objects"},
	} {
		_, err := Decode(c.data, Hooks{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestHooks: each hook sees what it vets or models, its errors stop the
// machine, and calls it leaves alone are recorded as objects.
func TestHooks(t *testing.T) {
	var seen []string
	hooks := Hooks{
		Opcode: func(op byte) error {
			if op == 'e' {
				return errors.New("APPENDS refused")
			}
			return nil
		},
		Global: func(g *Global) error {
			seen = append(seen, g.Module+"."+g.Name)
			if g.Module == "os" {
				return errors.New("class refused")
			}
			return nil
		},
		Call: func(g *Global, args Tuple) (any, bool, error) {
			if g.Name != "double" {
				return nil, false, nil
			}
			return 2 * args[0].(int64), true, nil
		},
		Persistent: func(pid any) (any, error) { return "loaded " + pid.(string), nil },
	}
	// (m.double(21), m.Thing(1), persistent "a", persistent "b")
	data := []byte("\x80\x02(cm\ndouble\nK\x15\x85Rcm\nThing\nK\x01\x85\x81Pa\n\x8c\x01bQt.")
	v, err := Decode(data, hooks)
	if err != nil {
		t.Fatal(err)
	}
	tup, ok := v.(Tuple)
	if !ok || len(tup) != 4 {
		t.Fatalf("have a %s, want a tuple of 4", TypeName(v))
	}
	if tup[0] != int64(42) || tup[2] != "loaded a" || tup[3] != "loaded b" {
		t.Errorf("values %v", tup)
	}
	o, ok := tup[1].(*Object)
	if !ok || o.Class.Name != "Thing" || len(o.Args) != 1 || o.Args[0] != int64(1) {
		t.Errorf("object %#v", tup[1])
	}
	if strings.Join(seen, " ") != "m.double m.Thing" {
		t.Errorf("vetted %v", seen)
	}
	for _, c := range []struct{ data, want string }{
		{"\x80\x02cos\nsystem\n.", "pickle opcode 'c' at byte 2: class refused"},
		{"\x80\x02](K\x01e.", "pickle opcode 'e' at byte 6: APPENDS refused"},
	} {
		if _, err := Decode([]byte(c.data), hooks); err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %q", c.data, err, c.want)
		}
	}
}

// TestLongTextArgumentsQuoted: a text opcode's argument of 64 KiB
// (an integer, a float, a memo index) is quoted to at most quote.Limit
// bytes in the error.
func TestLongTextArgumentsQuoted(t *testing.T) {
	big := strings.Repeat("9", 1<<16) + "x"
	for _, op := range []byte{'I', 'F', 'g'} {
		data := append(append([]byte{'(', op}, big...), '\n', '.')
		_, err := Decode(data, Hooks{})
		if err == nil || len(err.Error()) > 2*quote.Limit || !strings.Contains(err.Error(), "bytes)") {
			t.Errorf("opcode %c: an error of %d bytes, want the argument quoted to %d: %.300v", op, len(fmt.Sprint(err)), quote.Limit, err)
		}
	}
}
