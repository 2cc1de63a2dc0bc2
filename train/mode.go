package train

import (
	"fmt"

	"github.com/fanout-gnn/fanout/internal/quote"
)

// Mode is the driver a run trains with, from the command line's --mode to
// the trainer: one type everywhere.
type Mode int

const (
	Auto   Mode = iota // replay on a GPU (hybrid when the data does not fit it), eager on the CPU
	Eager              // the host issues every step (Trainer.Run)
	Replay             // the whole step captured once and replayed (Trainer.RunReplay)
	Hybrid             // replay over features in a GPU cache and host memory (package train/hybrid)
)

// Modes are the modes by name, in the order messages list them.
func Modes() []Mode { return []Mode{Auto, Eager, Replay, Hybrid} }

// String is the mode's name on the command line.
func (m Mode) String() string {
	switch m {
	case Eager:
		return "eager"
	case Replay:
		return "replay"
	case Hybrid:
		return "hybrid"
	}
	return "auto"
}

// ParseMode reads a mode's name: auto, eager, replay or hybrid.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes() {
		if s == m.String() {
			return m, nil
		}
	}
	return Auto, fmt.Errorf("%s, want auto, eager, replay or hybrid", quote.Quote(s))
}

// Set parses s into m (flag.Value).
func (m *Mode) Set(s string) error {
	v, err := ParseMode(s)
	if err == nil {
		*m = v
	}
	return err
}

// Captures reports whether the mode's driver replays a captured step.
func (m Mode) Captures() bool { return m == Replay || m == Hybrid }

// Resolve turns Auto into the mode of the device: replay on a GPU (it
// beats eager there: docs/perf.md), eager on the CPU (where launches cost
// nothing). Other modes stay.
func (m Mode) Resolve(gpu bool) Mode {
	switch {
	case m != Auto:
		return m
	case gpu:
		return Replay
	}
	return Eager
}
