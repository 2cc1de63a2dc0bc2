package quote

import (
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
