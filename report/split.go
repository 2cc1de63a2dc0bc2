package report

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Split is one measured step's time split (fanout bench), in seconds per
// step, under a label (the mode).
type Split struct {
	Label                       string
	Sample, Gather, Train, Idle float64
	Step                        float64 // the whole step, unsynced
}

// PlotSplit writes a PNG bar chart of the step's stages in milliseconds,
// one group of bars per stage and one bar per split (mode).
func PlotSplit(title string, splits []Split, out string) error {
	if len(splits) == 0 {
		return fmt.Errorf("plot: no measured step")
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "milliseconds per step"
	stages := []string{"sample", "gather", "train", "idle", "whole step"}
	colors := []color.Color{blue, orange, green, red}
	w := vg.Points(60 / float64(len(splits)))
	top := 0.0
	for i, s := range splits {
		top = max(top, s.Sample, s.Gather, s.Train, s.Idle, s.Step)
		label := s.Label
		if s.Sample+s.Gather+s.Train == 0 {
			label += " (whole step only: its stages run in one captured graph)"
		}
		vals := plotter.Values{s.Sample * 1e3, s.Gather * 1e3, s.Train * 1e3, s.Idle * 1e3, s.Step * 1e3}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return err
		}
		b.Color = colors[i%len(colors)]
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(i)-float64(len(splits)-1)/2)
		p.Add(b)
		p.Legend.Add(label, b)
	}
	p.Y.Min, p.Y.Max = 0, top*1e3*1.3 // room for the legend above the bars
	p.Legend.Top = true
	p.NominalX(stages...)
	p.Add(plotter.NewGrid())
	return save(out, p)
}
