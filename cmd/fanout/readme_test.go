package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The README's commands run as written (issue 23): every shell block is
// read, and each command that needs no GPU, no network and no data this
// machine lacks is run, in a temporary folder, by the binary its own
// `go build` line makes. The rewrites are few and listed here: paths the
// README leaves to the reader (path/to/planetoid) point at the Planetoid
// Cora files, --epochs is capped at readmeEpochs, the large presets are
// generated at tiny's size, and `go build -o fanout` writes into the
// temporary folder. A command the test cannot place fails it, so a new
// README command is either run here or skipped with its reason.

// readmeEpochs caps --epochs (the tour trains Cora for 200).
const readmeEpochs = 20

// readmeCommandTimeout ends a command that hangs.
const readmeCommandTimeout = 5 * time.Minute

// repoRoot is the directory of the module's go.mod, found from the test's
// working directory upwards.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/fanout-gnn/fanout\n") {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod of github.com/fanout-gnn/fanout above the test's directory")
		}
		dir = up
	}
}

// readmeText is the repository's README.md.
func readmeText(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// shellBlock is one fenced block of the README: its language and lines.
type shellBlock struct {
	lang  string
	line  int // the line of the opening fence, 1-based
	lines []string
}

// fencedBlocks splits markdown into its fenced blocks.
func fencedBlocks(md string) []shellBlock {
	var out []shellBlock
	var cur *shellBlock
	for i, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			if cur == nil {
				cur = &shellBlock{lang: strings.TrimSpace(strings.TrimPrefix(l, "```")), line: i + 1}
			} else {
				out = append(out, *cur)
				cur = nil
			}
			continue
		}
		if cur != nil {
			cur.lines = append(cur.lines, l)
		}
	}
	return out
}

// readmeCommand is one command of a shell block, its continuation lines
// joined and its comment removed.
type readmeCommand struct {
	line int    // README line it starts on
	text string // as written
}

// shellCommands returns the commands of a shell block; comments (a # at
// the start of a line or after a space) are dropped.
func shellCommands(b shellBlock) []readmeCommand {
	var out []readmeCommand
	var acc []string
	start := 0
	for i, l := range b.lines {
		if len(acc) == 0 {
			start = b.line + 1 + i
		}
		if j := strings.Index(l, "#"); j == 0 || (j > 0 && (l[j-1] == ' ' || l[j-1] == '\t')) {
			l = l[:j]
		}
		l = strings.TrimSpace(l)
		if cont := strings.HasSuffix(l, `\`); cont {
			acc = append(acc, strings.TrimSpace(strings.TrimSuffix(l, `\`)))
			continue
		}
		if l != "" {
			acc = append(acc, l)
		}
		if len(acc) > 0 {
			out = append(out, readmeCommand{line: start, text: strings.Join(acc, " ")})
			acc = nil
		}
	}
	return out
}

// readmeRun is the state of a README run: the temporary folder, the data
// the skipped commands would have made, and what happened.
type readmeRun struct {
	t           *testing.T
	root, dir   string
	cora        string
	goTool      string
	unavailable map[string]string // path -> why it was not made
	ran         []string
	skipped     []string
}

// place decides what to do with a command: "" runs it (with words as its
// arguments), otherwise the reason it is skipped.
func (r *readmeRun) place(words []string) (args []string, skip string) {
	cmd := strings.Join(words, " ")
	switch {
	case cmd == "go test ./...":
		return nil, "this test is part of it"
	case strings.Contains(cmd, "torchrun") || strings.HasPrefix(words[0], "FANOUT_TOKEN=") || words[0] == "srun":
		return nil, "a multi-host launcher (torchrun, Slurm) with GPUs"
	case strings.Contains(cmd, "--device cuda"):
		return nil, "needs a GPU"
	case strings.Contains(cmd, "--mode hybrid"):
		return nil, "the hybrid mode needs a GPU"
	}
	args = append([]string(nil), words...)
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "path/to/planetoid":
			args[i] = r.cora
		case strings.HasPrefix(a, "path/to/"):
			return nil, fmt.Sprintf("needs %s, which is not here", strings.TrimPrefix(a, "path/to/"))
		case r.unavailable[a] != "":
			return nil, fmt.Sprintf("reads %s, which %s", a, r.unavailable[a])
		case (a == "products-sim" || a == "papers-sim") && i > 0 && (args[i-1] == "gen" || args[i-1] == "--preset"):
			args[i] = "tiny" // the shape of the command, at a size CI can generate
		case a == "--epochs" && i+1 < len(args):
			if n, err := strconv.Atoi(args[i+1]); err == nil && n > readmeEpochs {
				args[i+1] = strconv.Itoa(readmeEpochs)
			}
		}
	}
	return args, ""
}

// outputs are the paths a command writes (--out, and -o of go build).
func outputs(words []string) []string {
	var out []string
	for i := 0; i+1 < len(words); i++ {
		if words[i] == "--out" || words[i] == "-o" {
			out = append(out, words[i+1])
		}
	}
	return out
}

// exec runs one placed command.
func (r *readmeRun) exec(c readmeCommand, args []string) {
	t := r.t
	if strings.ContainsAny(c.text, `'"$|;&<>()`) {
		t.Fatalf("README line %d: %q: quoting, variables or pipes are beyond this test's reading of commands; skip it or teach the test", c.line, c.text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), readmeCommandTimeout)
	defer cancel()
	var cmd *exec.Cmd
	switch {
	case args[0] == "go":
		// go build -o fanout writes into the temporary folder; go run
		// runs from the repository, as the README says.
		for i := range args {
			if i > 0 && args[i-1] == "-o" {
				args[i] = filepath.Join(r.dir, args[i])
			}
		}
		cmd = exec.CommandContext(ctx, r.goTool, args[1:]...)
		cmd.Dir = r.root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	case args[0] == "./fanout":
		cmd = exec.CommandContext(ctx, filepath.Join(r.dir, "fanout"), args[1:]...)
		cmd.Dir = r.dir
	default:
		t.Fatalf("README line %d: %q: the test knows go and ./fanout; skip this command with its reason or teach the test", c.line, c.text)
	}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("README line %d: %s: still running after %s:\n%s", c.line, strings.Join(args, " "), readmeCommandTimeout, out)
	}
	if err != nil {
		t.Fatalf("README line %d: %s: %v\n%s", c.line, strings.Join(args, " "), err, out)
	}
	if strings.Contains(string(out), "panic") || strings.Contains(string(out), "goroutine ") {
		t.Fatalf("README line %d: %s: a panic:\n%s", c.line, strings.Join(args, " "), out)
	}
	r.ran = append(r.ran, fmt.Sprintf("line %d (%.1fs): %s", c.line, time.Since(start).Seconds(), strings.Join(args, " ")))
}

// TestREADMECommands runs the README's commands as written (see above) and
// checks that the files its comments name (runs/cora/best.ckpt, ...) are
// there afterwards.
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the README's commands take about a minute")
	}
	root := repoRoot(t)
	md := readmeText(t)
	r := &readmeRun{t: t, root: root, dir: t.TempDir(), cora: coraFiles(t, root), unavailable: map[string]string{}}
	var err error
	if r.goTool, err = exec.LookPath("go"); err != nil {
		r.goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	named := regexp.MustCompile(`(?:^|\s)((?:runs|data)/[\w./-]+\.\w+)`)
	var promised []string
	for _, b := range fencedBlocks(string(md)) {
		switch b.lang {
		case "sh", "bash", "shell", "console":
		case "yaml":
			r.configBlock(b)
			continue
		default:
			continue
		}
		for _, l := range b.lines {
			if j := strings.Index(l, "#"); j >= 0 {
				for _, m := range named.FindAllStringSubmatch(l[j:], -1) {
					promised = append(promised, m[1])
				}
			}
		}
		for _, c := range shellCommands(b) {
			words := strings.Fields(c.text)
			args, skip := r.place(words)
			if skip != "" {
				if strings.Contains(c.text, "--device cpu") && !strings.Contains(skip, "not here") && !strings.Contains(skip, ", which ") {
					t.Errorf("README line %d: %q trains on the CPU but was skipped (%s)", c.line, c.text, skip)
				}
				for _, o := range outputs(words) {
					r.unavailable[o] = "the skipped command of line " + strconv.Itoa(c.line) + " makes"
				}
				r.skipped = append(r.skipped, fmt.Sprintf("line %d: %s: %s", c.line, c.text, skip))
				continue
			}
			r.exec(c, args)
		}
	}
	for _, p := range promised {
		if _, err := os.Stat(filepath.Join(r.dir, p)); err != nil && r.unavailableUnder(p) == "" {
			t.Errorf("the README's comments name %s, which its commands did not make: %v", p, err)
		}
	}
	t.Logf("ran %d commands:\n  %s", len(r.ran), strings.Join(r.ran, "\n  "))
	t.Logf("skipped %d:\n  %s", len(r.skipped), strings.Join(r.skipped, "\n  "))
	if len(r.ran) < 10 {
		t.Errorf("only %d of the README's commands ran", len(r.ran))
	}
}

// unavailableUnder says why path, or a folder above it, was not made.
func (r *readmeRun) unavailableUnder(path string) string {
	for p := path; p != "." && p != "/"; p = filepath.Dir(p) {
		if why := r.unavailable[p]; why != "" {
			return why
		}
	}
	return ""
}

// configBlock runs a YAML block that its first line names as a config
// file and gives the command for ("# cora.yaml: fanout train --config
// cora.yaml"): the file is written and the command run, into a run
// directory of its own (the tour's Cora command already wrote the one the
// file names).
func (r *readmeRun) configBlock(b shellBlock) {
	if len(b.lines) == 0 {
		return
	}
	m := regexp.MustCompile(`^#\s*([\w.-]+\.ya?ml):\s*(fanout .*)$`).FindStringSubmatch(strings.TrimSpace(b.lines[0]))
	if m == nil {
		return
	}
	if err := os.WriteFile(filepath.Join(r.dir, m[1]), []byte(strings.Join(b.lines, "\n")), 0o644); err != nil {
		r.t.Fatal(err)
	}
	words := append(strings.Fields("./"+m[2]), "--out", "runs/from-"+strings.TrimSuffix(m[1], filepath.Ext(m[1])), "--epochs", strconv.Itoa(readmeEpochs))
	r.exec(readmeCommand{line: b.line + 1, text: m[2]}, words)
}

// coraFiles is the Planetoid Cora folder: $FANOUT_CORA_DIR, or
// shared/datasets/planetoid-cora beside the repository.
func coraFiles(t *testing.T, root string) string {
	t.Helper()
	dir := os.Getenv("FANOUT_CORA_DIR")
	if dir == "" {
		dir = filepath.Join(filepath.Dir(root), "shared", "datasets", "planetoid-cora")
	}
	if _, err := os.Stat(filepath.Join(dir, "ind.cora.graph")); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			t.Skipf("Planetoid Cora not found at %s (set FANOUT_CORA_DIR): the README's tour imports it", dir)
		}
		t.Fatal(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
