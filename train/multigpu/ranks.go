package multigpu

import (
	"errors"
	"runtime"
	"sync"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/train"
)

// RunRanks runs rank(i) for each of a group's ranks (colls[i] is rank i's
// collective), each on a goroutine of its own locked to an OS thread (a
// CUDA context is current per thread), and waits for all. The first rank
// that fails other than by train.ErrInterrupted aborts every collective
// that can (an Abort(error) method), so no rank waits in a reduction for
// it; an interruption stops every rank at the same step (the drivers agree
// on it), so it aborts nothing. The error is firstError's: the first
// rank's failure, or the interruption.
func RunRanks(colls []backend.Collective, rank func(i int) error) error {
	errs := make([]error, len(colls))
	var wg sync.WaitGroup
	for i := range colls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if errs[i] = rank(i); errs[i] != nil && !errors.Is(errs[i], train.ErrInterrupted) {
				for _, c := range colls {
					if a, ok := c.(aborter); ok {
						a.Abort(errs[i])
					}
				}
			}
		}()
	}
	wg.Wait()
	return firstError(errs)
}
