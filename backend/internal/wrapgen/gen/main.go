// Command gen writes the files generated from the op descriptions:
// `go run ./internal/wrapgen/gen` in the backend directory (the
// go:generate line of package backend) writes them below it.
package main

import (
	"fmt"
	"os"

	"github.com/fanout-gnn/fanout/backend/internal/wrapgen"
)

func main() {
	if len(os.Args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: gen (run in the backend directory)")
		os.Exit(2)
	}
	if err := wrapgen.Write("."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
