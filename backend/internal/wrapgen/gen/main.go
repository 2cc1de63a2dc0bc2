// Command gen writes the generated op methods of a backend wrapper:
// `go run ../internal/wrapgen/gen PKG` from the wrapper's directory (its
// go:generate line) writes ops_gen.go there from the backend package in
// the parent directory.
package main

import (
	"fmt"
	"os"

	"github.com/fanout-gnn/fanout/backend/internal/wrapgen"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen record|profile (run in the wrapper's directory)")
		os.Exit(2)
	}
	if err := wrapgen.Write("..", ".", os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
