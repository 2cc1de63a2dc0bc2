package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/fanout-gnn/fanout/export"
	"github.com/fanout-gnn/fanout/train/job"
)

// runExport writes a checkpoint's parameters for another framework.
func runExport(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("export", stderr)
	ckpt := fs.String("checkpoint", "", "checkpoint file (RUNDIR/best.ckpt or last.ckpt; required)")
	format := fs.String("format", "safetensors", "output format: safetensors (PyTorch Geometric's parameter names and layouts)")
	force := fs.Bool("force", false, "overwrite OUT if it exists")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *ckpt == "" {
		return errors.New("--checkpoint FILE is required")
	}
	if len(pos) != 1 {
		return fmt.Errorf("want one output file after the flags (fanout export --checkpoint C OUT.safetensors), got %d arguments", len(pos))
	}
	if *format != "safetensors" {
		return fmt.Errorf("format: %s, want safetensors", quoted(*format))
	}
	if _, err := os.Lstat(pos[0]); err == nil && !*force {
		return fmt.Errorf("%s exists; pass --force to overwrite it, or choose another file", pos[0])
	}
	if err := checkWritable("OUT", pos[0]); err != nil {
		return err
	}
	m, err := job.LoadForExport(*ckpt)
	if err != nil {
		return err
	}
	tensors, meta, err := export.PyG(m)
	if err != nil {
		return err
	}
	if err := export.WriteSafetensors(pos[0], tensors, meta); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d tensors of %s (%s) to %s\n", len(tensors), meta["pyg_model"], *ckpt, pos[0])
	return nil
}
