package cpu

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/backendtest"
)

func newTestBackend(threads int) func(t *testing.T) backend.Backend {
	return func(t *testing.T) backend.Backend {
		b := New(threads)
		t.Cleanup(func() { b.Close() })
		return b
	}
}

func TestConformance1Thread(t *testing.T)  { backendtest.Run(t, newTestBackend(1)) }
func TestConformance2Threads(t *testing.T) { backendtest.Run(t, newTestBackend(2)) }
func TestConformance3Threads(t *testing.T) { backendtest.Run(t, newTestBackend(3)) }
