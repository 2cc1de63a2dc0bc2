package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/fanout-gnn/fanout/report"
)

// runPlot draws a run directory's loss and accuracy per epoch.
func runPlot(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plot", stderr)
	out := fs.String("out", "", "PNG file to write (default: RUN/curves.png)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("want one run directory (fanout plot RUN), got %d arguments", len(pos))
	}
	r, err := report.ReadRun(pos[0])
	if err != nil {
		return err
	}
	path := *out
	if path == "" {
		path = filepath.Join(pos[0], "curves.png")
	}
	if err := checkWritable("--out", path); err != nil {
		return err
	}
	if err := report.PlotRun(r, path); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d epochs)\n", path, len(r.Epochs))
	return nil
}
