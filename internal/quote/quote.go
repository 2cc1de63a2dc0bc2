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
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(clip(s)), len(s))
}

// clip is the first Limit bytes of s (longer than that), cut at a
// character's start.
func clip(s string) string {
	cut := Limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Err is err with its message cut to Limit bytes (at a character's start,
// "... (N bytes)" after it), for a library's error that may quote or
// describe its input at length; errors.Is and errors.As see err. Nil stays
// nil.
func Err(err error) error {
	if err == nil || len(err.Error()) <= Limit {
		return err
	}
	return cutErr{err}
}

type cutErr struct{ err error }

func (e cutErr) Error() string {
	s := e.err.Error()
	return fmt.Sprintf("%s... (%d bytes)", clip(s), len(s))
}

func (e cutErr) Unwrap() error { return e.err }
