package backendtest

import (
	"maps"
	"slices"
	"sync"
	"testing"
)

// measured keeps, for each tolerance the suite's checks use, the largest
// error they measured (|got - want| over the check's scale: the unit the
// tolerance is in) and the check that measured it. Run logs it after the
// subtests, so that each backend's run gives the figures the tolerances'
// comments quote.
type measured struct {
	mu    sync.Mutex
	worst map[float64]worstCheck
}

type worstCheck struct {
	err  float64
	what string
}

// add records err, measured by the check what against tolerance tol.
func (m *measured) add(tol, err float64, what string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.worst == nil {
		m.worst = map[float64]worstCheck{}
	}
	if w, ok := m.worst[tol]; !ok || err > w.err {
		m.worst[tol] = worstCheck{err, what}
	}
}

// log writes a line per tolerance: the largest error measured, by which
// check, and the tolerance's multiple of it.
func (m *measured) log(t *testing.T) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, tol := range slices.Sorted(maps.Keys(m.worst)) {
		w := m.worst[tol]
		if w.err == 0 {
			t.Logf("tolerance %g: measured relative error 0 (every check exact)", tol)
			continue
		}
		t.Logf("tolerance %g: measured relative error %.2g at most (%s): the tolerance is %.1fx it", tol, w.err, w.what, tol/w.err)
	}
}
