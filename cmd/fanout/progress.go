package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress reports long work one stage at a time: a progress bar on a
// terminal, otherwise a line per stage once the work has run for a while.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	title string
	stage string
	start time.Time
	bar   *progressbar.ProgressBar
}

// quietFor is how long work runs before a non-terminal progress says anything.
const quietFor = 2 * time.Second

func newProgress(w io.Writer, title string) *progress {
	return &progress{w: w, title: title, start: time.Now(), tty: isTerminal(w)}
}

// isTerminal reports whether w is a terminal (progress bars go there only).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// update reports done of total for a stage; a new stage starts a new bar.
func (p *progress) update(stage string, done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if stage == p.stage {
		if p.bar != nil {
			p.bar.Set64(done)
		}
		return
	}
	p.stage = stage
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
	if !p.tty {
		if time.Since(p.start) > quietFor {
			fmt.Fprintf(p.w, "%s: %s (%s)\n", p.title, stage, time.Since(p.start).Round(time.Second))
		}
		return
	}
	p.bar = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(p.title+": "+stage),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(30))
	p.bar.Set64(done)
}

// done ends the last bar.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}
