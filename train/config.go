// Package train runs the training step and the drivers around it. step.go
// holds one iteration over a preallocated Plan (sample, gather, forward,
// loss, backward, Adam); eager.go drives it batch by batch from the host.
// Later modes (replay, hybrid, multi-GPU) are drivers around the same step.
package train

import "github.com/fanout-gnn/fanout/checkpoint"

// Config is one training run's configuration (checkpoint.Config, which a
// checkpoint records). The zero value is not valid: start from Defaults and
// override. (The command line's flags and config file keys for it are
// listed in cmd/fanout/config.go; Validate's messages use those names.)
type Config = checkpoint.Config

// Defaults is a sensible starting configuration (GraphSAGE, 2 layers).
func Defaults() Config { return checkpoint.Defaults() }

// FormatFanouts prints fanouts as "15,10,5".
func FormatFanouts(f []int) string { return checkpoint.FormatFanouts(f) }
