package dataset

import (
	"strings"
	"testing"

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
