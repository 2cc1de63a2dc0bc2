package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// checkBars asserts the consistency rule of the step split picture: the
// stage bar stacks exactly the measured stages plus the unattributed rest
// of the whole step, the whole-step bar is the measured step, so the stack
// ends where the whole step does unless the stages add up to more; and
// then, and only then, a note names the mode and both sums.
func checkBars(t *testing.T, s Split) {
	t.Helper()
	b := barsOf(s)
	const ms = 1e3
	stages := s.Sample + s.Gather + s.Train
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }
	stack := b.Stages[0] + b.Stages[1] + b.Stages[2] + b.Stages[3]
	if !near(b.Stages[0], s.Sample*ms) || !near(b.Stages[1], s.Gather*ms) || !near(b.Stages[2], s.Train*ms) || b.Stages[3] < 0 {
		t.Errorf("%+v: stacked parts %v, want the stages in ms and a part >= 0", s, b.Stages)
	}
	if !near(b.Whole, s.Step*ms) {
		t.Errorf("%+v: whole step bar %g ms, want %g", s, b.Whole, s.Step*ms)
	}
	if !near(stack, max(stages, s.Step)*ms) || !near(b.top(), stack) {
		t.Errorf("%+v: stack %g ms, want the larger of the stages and the whole step, %g", s, stack, max(stages, s.Step)*ms)
	}
	for _, part := range b.Stages {
		if part > b.Whole && b.Note == "" {
			t.Errorf("%+v: a stage (%g ms) is taller than the whole step (%g ms) and nothing says why", s, part, b.Whole)
		}
	}
	switch {
	case stages > s.Step:
		for _, want := range []string{s.Label + ":", fmtMS(stages), fmtMS(s.Step), "sync"} {
			if !strings.Contains(b.Note, want) {
				t.Errorf("%+v: note %q lacks %q", s, b.Note, want)
			}
		}
	case stages > 0 && b.Note != "":
		t.Errorf("%+v: the stages fit in the whole step, but the note says %q", s, b.Note)
	}
}

// fmtMS is a time in seconds as the note writes it, in ms.
func fmtMS(s float64) string { return fmt.Sprintf("%.3g ms", s*1e3) }

func TestSplitBarsAddUp(t *testing.T) {
	for _, s := range []Split{
		// issue 23's picture: the synced train stage alone is longer than
		// the unsynced whole step.
		{Label: "eager", Sample: 2e-4, Gather: 1e-4, Train: 1.6e-3, Idle: 0, Step: 1.2e-3},
		{Label: "eager", Sample: 3e-4, Gather: 1e-4, Train: 1e-3, Idle: 1e-4, Step: 1.5e-3},
		{Label: "eager", Sample: 3e-4, Gather: 1e-4, Train: 1e-3, Step: 1.4e-3},
		{Label: "replay", Step: 1.2e-3},
	} {
		checkBars(t, s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		s := Split{Label: "m", Sample: r.Float64() * 1e-3, Gather: r.Float64() * 1e-3, Train: r.Float64() * 5e-3, Step: r.Float64() * 6e-3}
		s.Idle = max(0, s.Step-s.Sample-s.Gather-s.Train)
		checkBars(t, s)
	}
}

// drawnText draws the split chart into a recorder and returns its text.
func drawnText(t *testing.T, splits []Split) string {
	t.Helper()
	p, err := splitPlot("tiny step", splits)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder.Canvas{}
	p.Draw(draw.Canvas{Canvas: rec, Rectangle: vg.Rectangle{Max: vg.Point{X: 8 * vg.Inch, Y: 4 * vg.Inch}}})
	var text []string
	for _, a := range rec.Actions {
		if f, ok := a.(*recorder.FillString); ok {
			text = append(text, f.String)
		}
	}
	return strings.Join(text, "\n")
}

// TestPlotSplitSaysWhy: the note is drawn on the picture, with how each
// bar was timed.
func TestPlotSplitSaysWhy(t *testing.T) {
	splits := []Split{
		{Label: "eager", Sample: 2e-4, Gather: 1e-4, Train: 1.6e-3, Step: 1.2e-3},
		{Label: "replay", Step: 9e-4},
	}
	text := drawnText(t, splits)
	for _, want := range []string{
		barsOf(splits[0]).Note, barsOf(splits[1]).Note,
		"each timed with a device sync after it", "whole step (no syncs)", "train", "eager", "replay",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the picture lacks %q; it reads:\n%s", want, text)
		}
	}
	text = drawnText(t, []Split{{Label: "eager", Sample: 3e-4, Gather: 1e-4, Train: 1e-3, Step: 1.5e-3}})
	if strings.Contains(text, "more than the whole step") {
		t.Errorf("stages within the whole step, but the picture says:\n%s", text)
	}
	out := filepath.Join(t.TempDir(), "s.png")
	if err := PlotSplit("tiny", splits, out); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, out, 768, 384)
}
