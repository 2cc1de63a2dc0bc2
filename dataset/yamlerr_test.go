package dataset

import (
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/internal/quote"
	"gopkg.in/yaml.v3"
)

// TestYAMLErrorOneLine: yaml.v3 quotes a bad scalar with its line breaks
// ("cannot unmarshal !!str `0\n\n0`"); the message keeps one line.
func TestYAMLErrorOneLine(t *testing.T) {
	var m struct{ N int }
	err := yaml.Unmarshal([]byte("0\n\n\n0"), &m)
	if err == nil {
		t.Fatal("yaml accepted a scalar for a mapping")
	}
	if !strings.Contains(err.Error(), "\n") {
		t.Skipf("yaml's message has no line break to take out: %q", err)
	}
	got := YAMLError(err, nil).Error()
	if strings.ContainsAny(got, "\n\r") || !strings.Contains(got, "cannot unmarshal") {
		t.Errorf("%q, want one line saying what yaml said", got)
	}
}

// TestYAMLErrorLongTag: a tag of any length (yaml shows it bare:
// "cannot unmarshal !JJ…J into …") is cut to quote.Limit bytes, as the
// input yaml quotes is.
func TestYAMLErrorLongTag(t *testing.T) {
	var m struct{ N int }
	err := yaml.Unmarshal([]byte("!"+strings.Repeat("J", 1200)), &m)
	if err == nil {
		t.Fatal("yaml accepted a tagged scalar for a mapping")
	}
	got := YAMLError(err, nil).Error()
	if len(got) > quote.Limit+200 || !strings.Contains(got, "cannot unmarshal") || !strings.Contains(got, "(1201 bytes)") {
		t.Errorf("%d bytes: %.300q, want the tag cut to %d bytes", len(got), got, quote.Limit)
	}
}
