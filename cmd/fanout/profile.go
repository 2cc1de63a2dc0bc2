package main

import (
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/train/job"
)

// profileTop is how many ops the table shows.
const profileTop = 15

// printProfile prints the profiled ops, the largest time first.
func printProfile(w io.Writer, pr job.ProfileReport) {
	fmt.Fprintf(w, "preset %s on %s, eager profile (%s), %d steps\n", pr.Preset, pr.Device, pr.Date, pr.Steps)
	fmt.Fprintf(w, "  device time of ops %.1f µs per step; wall %.1f µs per step (marks add host work)\n", pr.DeviceS*1e6, pr.StepS*1e6)
	fmt.Fprintf(w, "  %-24s %10s %10s %7s\n", "op", "calls/step", "µs/step", "share")
	for i, o := range pr.Ops {
		if i == profileTop {
			fmt.Fprintf(w, "  (%d more ops)\n", len(pr.Ops)-profileTop)
			break
		}
		fmt.Fprintf(w, "  %-24s %10.1f %10.1f %6.1f%%\n", o.Name, o.CallsPerStep, o.USPerStep, 100*o.Share)
	}
	fmt.Fprintf(w, "  (%s)\n", pr.Note)
}
