// Package quote quotes a rejected input in an error message: Go-quoted,
// and at most Limit bytes of it, so that a pasted file in a flag or a
// variable does not become a message of megabytes.
package quote

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Limit is how many bytes of an input a message quotes.
const Limit = 200

// Quote is s Go-quoted; past Limit bytes, its first Limit bytes (cut at a
// character's start) followed by "... (N bytes)".
func Quote(s string) string {
	if len(s) <= Limit {
		return strconv.Quote(s)
	}
	cut := Limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(s[:cut]), len(s))
}
