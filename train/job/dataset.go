package job

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/fanout-gnn/fanout/dataset"
)

// CheckTarget checks a dataset's output directory before any work: a dataset there is replaced only
// with --force, and anything else there is refused.
func CheckTarget(out string, force bool) error {
	holds, err := dataset.CheckTarget(out)
	if err != nil {
		return err
	}
	if holds && !force {
		return fmt.Errorf("%s already holds a dataset; pass --force to replace it, or choose another --out", out)
	}
	return nil
}

// WhileRunning runs f in a goroutine of its own and returns its result, or
// ctx's error as soon as ctx is done: f, which cannot be stopped, is left
// to the process's exit (a generator or an importer, which writes
// nothing).
func WhileRunning[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// WriteDataset writes ds to out for gen and import: it says which
// temporary folders of an earlier, killed write of out it removed, and,
// when ctx is done (Ctrl-C, SIGTERM), removes what it wrote, says so and
// returns ErrInterrupted.
func WriteDataset(ctx context.Context, out string, ds *dataset.Dataset, log io.Writer) error {
	stale, err := dataset.WriteContext(ctx, out, ds)
	if len(stale) > 0 {
		fmt.Fprintf(log, "removed %d temporary folder(s) that an interrupted write of %s left: %s\n", len(stale), out, strings.Join(stale, ", "))
	}
	if ctx.Err() != nil {
		return InterruptedWrite(out, log)
	}
	return err
}

// InterruptedWrite says that nothing was written to out and returns
// ErrInterrupted.
func InterruptedWrite(out string, log io.Writer) error {
	fmt.Fprintf(log, "interrupted: nothing written to %s (its temporary folder removed)\n", out)
	return ErrInterrupted
}
