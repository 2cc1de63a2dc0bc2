package edgelist

import (
	"fmt"
	"io"
	"time"
)

// Progress is how far ImportBounded has come in one of its stages:
// "read" (the edge files, in bytes: sorted runs are written as the buffer
// fills), "combine" (a merge pass of runs into longer runs, in keys, when
// there are too many runs for one pass) and "merge" (the last pass, which
// writes the graph, in keys).
type Progress struct {
	Stage       string
	Pass        int // combine: which pass
	Done, Total int64
	Unit        string // "bytes" or "keys"
	Edges       int64  // edges read so far
	Runs        int    // sorted runs on disk
	Elapsed     time.Duration
	// ETA is the stage's time left at its rate so far; negative while
	// unknown.
	ETA time.Duration
}

// tracker fills in a stage's times and hands reports to a callback.
type tracker struct {
	fn    func(Progress)
	start time.Time // of the import
	stage time.Time // of the current stage
	p     Progress
}

func newTracker(fn func(Progress)) *tracker {
	now := time.Now()
	return &tracker{fn: fn, start: now, stage: now}
}

// begin starts a stage of total units.
func (t *tracker) begin(stage string, total int64, unit string) {
	t.p.Stage, t.p.Total, t.p.Unit, t.p.Done = stage, total, unit, 0
	t.stage = time.Now()
	t.report(0)
}

// report says done units of the stage are done.
func (t *tracker) report(done int64) {
	if t.fn == nil {
		return
	}
	now := time.Now()
	t.p.Done, t.p.Elapsed = done, now.Sub(t.start)
	t.p.ETA = eta(done, t.p.Total, now.Sub(t.stage))
	t.fn(t.p)
}

// eta is the time left for total units when done took spent; -1 while
// nothing is done.
func eta(done, total int64, spent time.Duration) time.Duration {
	if done <= 0 || total <= 0 {
		return -1
	}
	left := float64(max(total-done, 0)) / float64(done) * float64(spent)
	return time.Duration(left).Round(time.Second)
}

// ProgressPrinter returns a Progress callback that writes a line to w when
// a stage starts and ends and at most once per interval between.
func ProgressPrinter(w io.Writer, interval time.Duration) func(Progress) {
	var last time.Time
	var stage string
	return func(p Progress) {
		now := time.Now()
		end := p.Total > 0 && p.Done >= p.Total
		if p.Stage == stage && !end && now.Sub(last) < interval {
			return
		}
		stage, last = p.Stage, now
		fmt.Fprintln(w, p.String())
	}
}

// String words p as one line.
func (p Progress) String() string {
	name := p.Stage
	if p.Stage == "combine" {
		name = fmt.Sprintf("combine (pass %d)", p.Pass)
	}
	s := fmt.Sprintf("%s: %s of %s", name, amount(p.Done, p.Unit), amount(p.Total, p.Unit))
	if p.Total > 0 {
		s += fmt.Sprintf(" (%.0f%%)", 100*float64(p.Done)/float64(p.Total))
	}
	s += fmt.Sprintf(", %d edges read, %d runs, %s elapsed", p.Edges, p.Runs, p.Elapsed.Round(time.Second))
	if p.ETA >= 0 {
		s += ", ETA " + p.ETA.String()
	}
	return s
}

// amount words n units: bytes in MiB or GiB, keys as a count.
func amount(n int64, unit string) string {
	if unit != "bytes" {
		return fmt.Sprintf("%d %s", n, unit)
	}
	if n >= 1<<30 {
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
