package backend_test

import (
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/profile"
	"github.com/fanout-gnn/fanout/backend/record"
)

// coreOnly is a backend with the required core and no capability.
type coreOnly struct{ backend.Backend }

// TestOpCapabilities: the CPU backend has every op capability, and so do
// the wrappers around it; a backend with the core only has none, and a
// wrapper around it (whose generated methods would reach nothing) has
// none either: each lookup's error names the backend and the capability.
func TestOpCapabilities(t *testing.T) {
	lookups := []struct {
		iface string
		of    func(backend.Backend) error
	}{
		{"backend.Attention", func(be backend.Backend) error { _, err := backend.AttentionOf(be); return err }},
		{"backend.HotRows", func(be backend.Backend) error { _, err := backend.HotRowsOf(be); return err }},
		{"backend.TieredGather", func(be backend.Backend) error { _, err := backend.TieredOf(be); return err }},
		{"backend.Norm", func(be backend.Backend) error { _, err := backend.NormOf(be); return err }},
		{"backend.JumpingKnowledge", func(be backend.Backend) error { _, err := backend.JumpingKnowledgeOf(be); return err }},
		{"backend.Link", func(be backend.Backend) error { _, err := backend.LinkOf(be); return err }},
	}
	full := cpu.New(1)
	core := coreOnly{cpu.New(1)}
	for _, be := range []backend.Backend{full, record.New(full), profile.New(record.New(full))} {
		for _, l := range lookups {
			if err := l.of(be); err != nil {
				t.Errorf("%s: %v", be.Name(), err)
			}
		}
	}
	for _, be := range []backend.Backend{core, record.New(core), profile.New(core)} {
		for _, l := range lookups {
			err := l.of(be)
			if err == nil {
				t.Errorf("%s: has %s", be.Name(), l.iface)
				continue
			}
			for _, want := range []string{be.Name(), l.iface} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
		}
	}
}
