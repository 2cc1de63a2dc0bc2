// Command fanout trains graph neural networks with neighbour sampling on a
// CPU or a GPU.
//
//	fanout gen PRESET --out DIR       generate a benchmark dataset
//	fanout import FORMAT SRC --out DIR import OGB, Planetoid or npz data
//	fanout info DIR                   describe a dataset
//	fanout train [flags]              train (default: the built-in tiny preset)
//	fanout eval --checkpoint F --data DIR
//	fanout bench --preset NAME        measure a preset's epoch
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand: its name, a one-line summary and its body.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"gen", "generate a benchmark preset dataset (tiny, products-sim, papers-sim)", runGen},
		{"import", "import a dataset: ogb SRC | planetoid SRC --name NAME | npz FILE", runImport},
		{"info", "describe a dataset directory", runInfo},
		{"train", "train a model (no arguments: the built-in tiny preset)", runTrain},
		{"eval", "evaluate a checkpoint on a dataset", runEval},
		{"bench", "measure a preset's training epoch", runBench},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errUsage marks an error whose usage text was already printed.
var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			return 2
		default:
			fmt.Fprintf(stderr, "fanout %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "fanout: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: fanout COMMAND [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-7s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'fanout COMMAND -h' for a command's flags.")
}

// newFlags makes a flag set that reports errors instead of exiting.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("fanout "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses flags, allowing positional arguments before and between flags.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, errUsage
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
