package main

import (
	"io"
	"sync"

	"github.com/schollz/progressbar/v3"
)

// progress shows a progress bar for long work, one stage at a time.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	title string
	stage string
	bar   *progressbar.ProgressBar
}

func newProgress(w io.Writer, title string) *progress { return &progress{w: w, title: title} }

// update reports done of total for a stage; a new stage starts a new bar.
func (p *progress) update(stage string, done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil || stage != p.stage {
		if p.bar != nil {
			p.bar.Finish()
		}
		p.stage = stage
		p.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.title+": "+stage),
			progressbar.OptionThrottle(200_000_000),
			progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetWidth(30))
	}
	p.bar.Set64(done)
}

// done ends the last bar.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
	}
}
