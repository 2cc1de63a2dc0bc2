package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/fanout-gnn/fanout/backend/cuda"
)

// runVersion prints the module version, the commit it was built from, the
// Go version and which GPU libraries this machine has.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stderr)
	libDir := fs.String("cuda-lib-dir", "", "directory searched first for the GPU libraries")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("unexpected argument %s", quoted(pos[0]))
	}
	version, commit := "(unknown)", "(unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					commit += " (with uncommitted changes)"
				}
			}
		}
	}
	fmt.Fprintf(stdout, "fanout %s\ncommit %s\n%s %s/%s\nGPU libraries (loaded at run time):\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, l := range cuda.Probe(*libDir) {
		if l.Path == "" {
			fmt.Fprintf(stdout, "  %-22s %s\n", l.Name, l.Note)
			continue
		}
		fmt.Fprintf(stdout, "  %-22s %s", l.Name, l.Path)
		if l.Note != "" {
			fmt.Fprintf(stdout, " (%s)", l.Note)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}
