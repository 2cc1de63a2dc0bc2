package report

import (
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Split is one measured step's time split (fanout bench), in seconds per
// step, under a label (the mode). The stages come from a pass with a device
// sync after each stage; Step from a pass without syncs, where the stages
// overlap (the host queues one while the device runs another) and no sync
// waits: so Sample+Gather+Train may exceed Step.
type Split struct {
	Label                       string
	Sample, Gather, Train, Idle float64 // Idle: Step less the stages, 0 when negative
	Step                        float64 // the whole step, unsynced
}

// splitStages names the stacked parts of a split's stage bar, bottom first.
var splitStages = []string{"sample", "gather", "train", "unattributed (whole step less the stages)"}

// splitBars is how one Split is drawn, in milliseconds: the stages stacked
// in one bar, topped by the part of the whole step they do not account
// for, beside a bar of the whole step. The stack's top is
// max(stages, whole step); where the stages add up to more than the whole
// step, Note says so and why.
type splitBars struct {
	Stages [4]float64 // sample, gather, train, unattributed
	Whole  float64
	Note   string // "" when the stack ends where the whole step does
}

// barsOf lays out one split. The unattributed part is derived from Step
// and the stages (as bench derives Idle), so the stack always adds up.
func barsOf(s Split) splitBars {
	const ms = 1e3
	stages := s.Sample + s.Gather + s.Train
	b := splitBars{
		Stages: [4]float64{s.Sample * ms, s.Gather * ms, s.Train * ms, max(0, s.Step-stages) * ms},
		Whole:  s.Step * ms,
	}
	switch {
	case stages == 0:
		b.Note = fmt.Sprintf("%s: whole step only (its stages run in one captured graph)", s.Label)
	case stages > s.Step:
		b.Note = fmt.Sprintf("%s: the synced stages add up to %.3g ms, more than the whole step (%.3g ms): without syncs, they overlap",
			s.Label, stages*ms, s.Step*ms)
	}
	return b
}

// top is the height of the taller of the two bars.
func (b splitBars) top() float64 {
	return max(b.Stages[0]+b.Stages[1]+b.Stages[2]+b.Stages[3], b.Whole)
}

var (
	lightGrey = color.Gray{Y: 190}
	darkGrey  = color.Gray{Y: 70}
)

// PlotSplit writes a PNG bar chart of the measured steps in milliseconds:
// per split (mode), the stages stacked in one bar beside the whole step in
// another (splitBars); the axis caption says how each was timed and, per
// mode, why the stages can add up to more than the whole step.
func PlotSplit(title string, splits []Split, out string) error {
	p, err := splitPlot(title, splits)
	if err != nil {
		return err
	}
	return save(out, p)
}

// splitPlot builds PlotSplit's chart.
func splitPlot(title string, splits []Split) (*plot.Plot, error) {
	if len(splits) == 0 {
		return nil, fmt.Errorf("plot: no measured step")
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "milliseconds per step"
	bars := make([]splitBars, len(splits))
	labels := make([]string, len(splits))
	caption := []string{"left: the stages, each timed with a device sync after it; right: the whole step, timed without syncs"}
	top := 0.0
	for i, s := range splits {
		bars[i], labels[i] = barsOf(s), s.Label
		top = max(top, bars[i].top())
		if bars[i].Note != "" {
			caption = append(caption, bars[i].Note)
		}
	}
	w := vg.Points(80 / float64(len(splits)))
	var below *plotter.BarChart
	for j, name := range splitStages {
		vals := make(plotter.Values, len(bars))
		for i, b := range bars {
			vals[i] = b.Stages[j]
		}
		c, err := bar(vals, w, []color.Color{blue, orange, green, lightGrey}[j])
		if err != nil {
			return nil, err
		}
		if below != nil {
			c.StackOn(below)
		} else {
			c.Offset = -w / 2
		}
		below = c
		p.Add(c)
		p.Legend.Add(name, c)
	}
	whole := make(plotter.Values, len(bars))
	for i, b := range bars {
		whole[i] = b.Whole
	}
	c, err := bar(whole, w, darkGrey)
	if err != nil {
		return nil, err
	}
	c.Offset = w / 2
	p.Add(c)
	p.Legend.Add("whole step (no syncs)", c)
	p.Y.Min, p.Y.Max = 0, top*1.5 // room for the legend above the bars
	p.Legend.Top = true
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.6, float64(len(splits))-0.4
	p.X.Label.Text = strings.Join(caption, "\n")
	p.X.Label.TextStyle.Font.Size = vg.Points(10)
	p.Add(plotter.NewGrid())
	return p, nil
}

// bar is a borderless bar chart of vals in one colour.
func bar(vals plotter.Values, w vg.Length, c color.Color) (*plotter.BarChart, error) {
	b, err := plotter.NewBarChart(vals, w)
	if err != nil {
		return nil, err
	}
	b.Color = c
	b.LineStyle.Width = 0
	return b, nil
}
