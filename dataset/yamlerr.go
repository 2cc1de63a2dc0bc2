package dataset

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/fanout-gnn/fanout/internal/quote"
	"gopkg.in/yaml.v3"
)

// YAMLError makes an error of yaml.v3's decoder one short line for a
// message about a file the user gave: of a type error's list (one line
// per bad value, as many as the file has), the first, reworded by reword
// where it is not nil, and how many more there are; the control
// characters of the input it quotes (a value's line breaks) shown as '?';
// the input yaml quotes in it ("key", 'anchor', `value`) and the tags it
// shows bare (!tag) cut to quote.Limit bytes.
func YAMLError(err error, reword func(string) string) error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
		if reword != nil {
			msg = reword(msg)
		}
		if len(te.Errors) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(te.Errors)-1)
		}
	}
	msg = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, msg)
	if len(msg) <= quote.Limit {
		return errors.New(msg)
	}
	return errors.New(yamlQuoted.ReplaceAllStringFunc(msg, func(q string) string {
		if q[0] == '!' {
			return quote.Quote(q) // a tag, which yaml shows bare
		}
		s := q[1 : len(q)-1]
		if q[0] == '"' {
			if u, err := strconv.Unquote(q); err == nil {
				s = u
			}
		}
		return quote.Quote(s)
	}))
}

// yamlQuoted matches the input in yaml's messages: "key", 'anchor',
// `value`, and a value's tag (!tag), which it shows unquoted.
var yamlQuoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'[^']*'|` + "`[^`]*`" + `|![^\s` + "`" + `]+`)
