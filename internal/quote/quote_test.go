package quote

import (
	"errors"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":                         `""`,
		"cuda:x":                   `"cuda:x"`,
		strings.Repeat("a", Limit): `"` + strings.Repeat("a", Limit) + `"`,
		strings.Repeat("a", 1000):  `"` + strings.Repeat("a", Limit) + `"... (1000 bytes)`,
		// A character across the limit is not cut in two.
		strings.Repeat("a", Limit-1) + "é" + "b": `"` + strings.Repeat("a", Limit-1) + `"... (202 bytes)`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%.20q...) = %.60s..., want %.60s...", in, got, want)
		}
	}
}

// TestErr: a long message is cut as Quote cuts (unquoted), a short one and
// nil are kept, and the cut error still unwraps to the original.
func TestErr(t *testing.T) {
	long := errors.New(strings.Repeat("x", Limit-1) + "é" + strings.Repeat("y", 500))
	got := Err(long)
	if want := strings.Repeat("x", Limit-1) + "... (701 bytes)"; got.Error() != want {
		t.Errorf("Err(long) = %.60q..., want %.60q...", got.Error(), want)
	}
	if !errors.Is(got, long) {
		t.Errorf("Err(long) does not unwrap to long")
	}
	short := errors.New("short")
	if Err(short) != short || Err(nil) != nil {
		t.Errorf("a short error or nil changed: %v, %v", Err(short), Err(nil))
	}
}
