package train

import (
	"flag"
	"testing"
)

// TestMode: every mode parses from its name (as a flag too), a wrong name
// is one line naming the choices, and Auto resolves to the device's mode.
func TestMode(t *testing.T) {
	for _, m := range Modes() {
		if got, err := ParseMode(m.String()); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m, got, err)
		}
	}
	if _, err := ParseMode("fast"); err == nil || err.Error() != `"fast", want auto, eager, replay or hybrid` {
		t.Errorf("fast: %v", err)
	}
	var m Mode
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Var(&m, "mode", "")
	if err := fs.Parse([]string{"--mode", "hybrid"}); err != nil || m != Hybrid || !m.Captures() {
		t.Errorf("--mode hybrid: %v, %v", m, err)
	}
	if Auto.Resolve(true) != Replay || Auto.Resolve(false) != Eager || Eager.Resolve(true) != Eager {
		t.Errorf("Resolve: auto on a GPU %v, on the CPU %v; eager on a GPU %v", Auto.Resolve(true), Auto.Resolve(false), Eager.Resolve(true))
	}
}

// modeOf is Replay or Eager.
func modeOf(replay bool) Mode {
	if replay {
		return Replay
	}
	return Eager
}
