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
	"regexp"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/train/job"
)

// command is one subcommand: its name, a one-line summary and its body.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"gen", "generate a benchmark preset dataset (tiny, products-sim, papers-sim)", runGen},
		{"import", "import a dataset: ogb SRC | planetoid SRC --name NAME | npz FILE | edges FILES --nodes FILE", runImport},
		{"info", "describe a dataset directory", runInfo},
		{"train", "train a model (no arguments: the built-in tiny preset)", runTrain},
		{"eval", "evaluate a checkpoint on a dataset", runEval},
		{"bench", "measure a preset's training epoch", runBench},
		{"plot", "draw a run's loss and accuracy per epoch as a PNG: RUN [--out F.png]", runPlot},
		{"simulate", "simulate a multi-device job's sampling and placement on the CPU and predict its epoch at 1 to 64 GPUs", runSimulate},
		{"launch", "start N local processes of one job: --nproc N -- train [flags] (torchrun's variables, a fresh token)", runLaunch},
		{"export", "write a checkpoint's parameters as safetensors under PyTorch Geometric's names: --checkpoint C OUT", runExport},
		{"version", "print the version, the commit, the Go version and the GPU libraries found", runVersion},
	}
}

func main() {
	args := os.Args[1:]
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := func() {}
	if len(args) > 0 && interruptible(args[0]) {
		stopSignals, stopPipes := cancelOnSignal(cancel, os.Stderr, stopping(args[0])), survivePipes()
		stop = func() { stopSignals(); stopPipes() }
	}
	code := run(ctx, args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// interruptible reports whether a command watches its context: on Ctrl-C or
// SIGTERM train finishes its step and saves, gen and import remove what they
// were writing, and each exits with 128 + the signal's number; a closed
// output does not stop them. The other commands keep the default: the
// signal ends them at once (they write their outputs atomically).
func interruptible(command string) bool { return stopping(command) != "" }

// stopping is what an interruptible command does on Ctrl-C or SIGTERM, as
// it says then; "" for the others.
func stopping(command string) string {
	switch command {
	case "train", "launch":
		return "stopping after the current step"
	case "gen", "import":
		return "stopping; what was written is removed"
	}
	return ""
}

// errUsage marks an error whose usage text was already printed.
var errUsage = errors.New("usage")

// exitError ends a command with a status and no further message: what
// there was to say was said.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

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
		var exit exitError
		switch {
		case errors.As(err, &exit):
			return int(exit)
		case errors.Is(err, job.ErrInterrupted): // the job said so
			return int(interruptStatus(ctx))
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
	fmt.Fprintf(stderr, "fanout: unknown command %s\n", quoted(args[0]))
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
	fs.Usage = func() {
		w := fs.Output()
		for _, c := range commands() {
			if c.name == name {
				fmt.Fprintf(w, "fanout %s: %s\n", name, c.summary)
			}
		}
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n == 0 {
			fmt.Fprintln(w, "(no flags)")
			return
		}
		fmt.Fprintln(w, "flags:")
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags, allowing positional arguments before and between
// flags. A bad flag is one line (the flag set's name and the error); -h
// prints the usage.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	defer func() { fs.Usage = usage; fs.SetOutput(out) }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			fs.Usage = usage
			fs.SetOutput(out)
			if errors.Is(err, flag.ErrHelp) {
				if usage != nil {
					usage()
				} else {
					fmt.Fprintf(out, "usage of %s:\n", fs.Name())
					fs.PrintDefaults()
				}
				return nil, err
			}
			fmt.Fprintf(out, "%s: %s\n", fs.Name(), flagError(err))
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

// badValue is the flag package's message for a value its flag refused,
// which quotes the whole value.
var badValue = regexp.MustCompile(`^invalid value ("(?:[^"\\]|\\.)*") for flag -(\S+): `)

// flagError is a flag parse error as fanout says it: flags spelled with
// two dashes, and at most quote.Limit bytes of a refused value.
func flagError(err error) string {
	msg := err.Error()
	if m := badValue.FindStringSubmatchIndex(msg); m != nil {
		if v, uerr := strconv.Unquote(msg[m[2]:m[3]]); uerr == nil {
			msg = "invalid value " + quoted(v) + " for flag -" + msg[m[4]:m[5]] + ": " + msg[m[1]:]
		}
	}
	msg = strings.Replace(msg, "for flag -", "for --", 1)
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		if now, ok := retiredFlags[strings.TrimPrefix(name, "-")]; ok {
			msg += " (" + now + ")"
		}
	}
	return strings.Replace(msg, "not defined: -", "not defined: --", 1)
}

// retiredFlags are flags an earlier fanout took, with what to give now.
var retiredFlags = map[string]string{
	"gat-aggregate-first": "GAT's bottom layer aggregates first by default where its input is narrower than --hidden; --gat-project-first keeps the other form",
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
