// Package report draws a run's figures as PNG pictures with gonum/plot:
// the loss and accuracy per epoch from a run directory's metrics.jsonl and
// summary.json, and the time split of a benchmarked step.
package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Epoch is one line of metrics.jsonl (the fields plotted): the task's
// validation figures in Valid, or, from runs of earlier versions, the
// validation accuracy and loss at the top.
type Epoch struct {
	Epoch int `json:"epoch"`
	// Steps is the epoch's steps and Step those trained at the line: a
	// validation within the epoch where Step is above 0 and below Steps.
	Steps     int                `json:"steps"`
	Step      int                `json:"step"`
	Loss      float64            `json:"loss"`
	TrainAcc  float64            `json:"train_acc"`
	Valid     map[string]float64 `json:"valid"`
	ValidAcc  *float64           `json:"valid_acc"` // the primary validation figure (accuracy, ROC-AUC)
	ValidLoss *float64           `json:"valid_loss"`
}

// At is where the line falls on the plot's epoch axis: at its epoch's
// number, or, for a validation within the epoch, the share of the epoch
// done past the one before.
func (e Epoch) At() float64 {
	if e.Step > 0 && e.Step < e.Steps {
		return float64(e.Epoch-1) + float64(e.Step)/float64(e.Steps)
	}
	return float64(e.Epoch)
}

// Run is what a run directory holds for the plot.
type Run struct {
	Epochs    []Epoch
	TestAcc   float64 // the primary test figure of the best-validation model; 0 when there is no summary
	BestEpoch int
	BestStep  int // the step of BestEpoch whose validation picked the model; 0 at its end
	Name      string
	Primary   string // the figure that picked the best model ("acc" where the summary does not say)
}

// ReadRun reads dir/metrics.jsonl and, when present, dir/summary.json.
func ReadRun(dir string) (*Run, error) {
	f, err := os.Open(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("plot: %w (is %s a run directory made by train --out?)", err, dir)
	}
	defer f.Close()
	r := &Run{Name: filepath.Base(dir), Primary: "acc"}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var e Epoch
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("plot: %s line %d: %w", f.Name(), line, err)
		}
		r.Epochs = append(r.Epochs, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("plot: %s: %w", f.Name(), err)
	}
	if len(r.Epochs) == 0 {
		return nil, fmt.Errorf("plot: %s holds no epoch", f.Name())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "summary.json")); err == nil {
		var s struct {
			TestAcc   float64            `json:"test_acc"` // earlier versions
			Test      map[string]float64 `json:"test"`
			Primary   string             `json:"primary"`
			BestEpoch int                `json:"best_epoch"`
			BestStep  int                `json:"best_step"`
			Dataset   string             `json:"dataset"`
			Config    struct {
				Model string `json:"model"`
			} `json:"config"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("plot: %s: %w", filepath.Join(dir, "summary.json"), err)
		}
		if s.Primary != "" {
			r.Primary = s.Primary
		}
		r.TestAcc, r.BestEpoch, r.BestStep = s.TestAcc, s.BestEpoch, s.BestStep
		if v, ok := s.Test[r.Primary]; ok {
			r.TestAcc = v
		}
		r.Name = fmt.Sprintf("%s on %s", s.Config.Model, s.Dataset)
	}
	for i := range r.Epochs {
		e := &r.Epochs[i]
		if v, ok := e.Valid[r.Primary]; ok && e.ValidAcc == nil {
			e.ValidAcc = &v
		}
		if v, ok := e.Valid["loss"]; ok && e.ValidLoss == nil {
			e.ValidLoss = &v
		}
	}
	return r, nil
}

var (
	blue   = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	orange = color.RGBA{R: 255, G: 127, B: 14, A: 255}
	green  = color.RGBA{R: 44, G: 160, B: 44, A: 255}
	red    = color.RGBA{R: 214, G: 39, B: 40, A: 255}
)

// BestAt is where the best-validation model's validation falls on the
// epoch axis (Epoch.At).
func (r *Run) BestAt() float64 {
	for _, e := range r.Epochs {
		if e.Epoch == r.BestEpoch && r.BestStep > 0 && e.Step == r.BestStep {
			return e.At()
		}
	}
	return float64(r.BestEpoch)
}

// PlotRun writes a PNG of the run: loss per epoch (training, validation)
// above accuracy per epoch (training, validation, and the test accuracy of
// the best-validation model at its epoch).
func PlotRun(r *Run, out string) error {
	loss := plot.New()
	loss.Title.Text = "loss per epoch: " + r.Name
	loss.Y.Label.Text = "loss"
	loss.X.Label.Text = "epoch"
	acc := plot.New()
	acc.Title.Text = "accuracy per epoch"
	acc.Y.Label.Text = "accuracy"
	acc.X.Label.Text = "epoch"
	acc.Y.Min, acc.Y.Max = 0, 1
	var tl, vl, ta, va plotter.XYs
	for _, e := range r.Epochs {
		x := e.At()
		tl = append(tl, plotter.XY{X: x, Y: e.Loss})
		ta = append(ta, plotter.XY{X: x, Y: e.TrainAcc})
		if e.ValidLoss != nil {
			vl = append(vl, plotter.XY{X: x, Y: *e.ValidLoss})
		}
		if e.ValidAcc != nil {
			va = append(va, plotter.XY{X: x, Y: *e.ValidAcc})
		}
	}
	if err := addLine(loss, "training", tl, blue); err != nil {
		return err
	}
	if err := addLine(loss, "validation", vl, orange); err != nil {
		return err
	}
	if err := addLine(acc, "training", ta, blue); err != nil {
		return err
	}
	if err := addLine(acc, "validation", va, orange); err != nil {
		return err
	}
	if r.BestEpoch > 0 {
		s, err := plotter.NewScatter(plotter.XYs{{X: r.BestAt(), Y: r.TestAcc}})
		if err != nil {
			return err
		}
		s.GlyphStyle.Color, s.GlyphStyle.Radius, s.GlyphStyle.Shape = red, vg.Points(4), draw.CircleGlyph{}
		acc.Add(s)
		acc.Legend.Add(fmt.Sprintf("test, best validation model (%.4f)", r.TestAcc), s)
	}
	for _, p := range []*plot.Plot{loss, acc} {
		p.Legend.Top = p == loss
		p.Legend.Left = false
		p.Add(plotter.NewGrid())
	}
	acc.Legend.Top = false
	return save(out, loss, acc)
}

func addLine(p *plot.Plot, name string, xy plotter.XYs, c color.Color) error {
	if len(xy) == 0 {
		return nil
	}
	l, s, err := plotter.NewLinePoints(xy)
	if err != nil {
		return err
	}
	l.Color, s.Color = c, c
	l.Width = vg.Points(1.5)
	s.Radius = vg.Points(1.5)
	p.Add(l, s)
	p.Legend.Add(name, l, s)
	return nil
}

// save draws the plots stacked vertically into a PNG at out.
func save(out string, plots ...*plot.Plot) error {
	const w, h = 8 * vg.Inch, 4 * vg.Inch
	img := vgimg.New(w, h*vg.Length(len(plots)))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(10), PadY: vg.Points(12)}
	canvases := plot.Align(plotsColumn(plots), tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[i][0])
	}
	// Written beside out and renamed over it, so a failure leaves no half
	// picture.
	f, err := os.CreateTemp(filepath.Dir(out), ".plot-*.png")
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", out, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plot %s: %w", out, err)
	}
	return os.Rename(f.Name(), out)
}

func plotsColumn(ps []*plot.Plot) [][]*plot.Plot {
	out := make([][]*plot.Plot, len(ps))
	for i, p := range ps {
		out[i] = []*plot.Plot{p}
	}
	return out
}
