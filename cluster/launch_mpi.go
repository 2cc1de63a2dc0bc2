package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// RunMPI starts nproc CPU processes of `fanout args...` under mpirun,
// which wires the MPI job they reduce in. mpirun's --tag-output marks each
// line with the rank that wrote it, which becomes the line's "[rank N]"
// prefix; mpirun's own lines are prefixed "[mpirun]". When the job fails,
// the error names the rank that failed first as mpirun saw it (killed by
// a signal, a non-zero exit, MPI_Abort), not mpirun's own status.
func RunMPI(ctx context.Context, exe string, args []string, nproc int, stdout, stderr io.Writer) error {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		return errors.New("CPU processes reduce through MPI: mpirun not found (Debian: apt-get install openmpi-bin)")
	}
	if err := MPIRootAllowed(os.Geteuid(), os.Getenv); err != nil {
		return err
	}
	lines := newMPILines(stdout, stderr)
	argv := append([]string{"-n", strconv.Itoa(nproc), "--oversubscribe", "--tag-output", exe}, args...)
	err = RunProcesses(ctx, mpirun, argv, 1, func(int) []string { return os.Environ() }, lines.sink)
	if err == nil {
		return nil
	}
	if lines.failed != "" {
		return fmt.Errorf("the job failed: %s", lines.failed)
	}
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		return fmt.Errorf("the job failed: mpirun: %w", exit)
	}
	return err
}

// MPIRootAllowed fails, with what to set, where mpirun would refuse to
// run as root (Open MPI asks for two variables, or --allow-run-as-root).
func MPIRootAllowed(euid int, getenv func(string) string) error {
	if euid != 0 || (getenv("OMPI_ALLOW_RUN_AS_ROOT") == "1" && getenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM") == "1") {
		return nil
	}
	return errors.New("CPU processes are started by mpirun, which refuses to run as root: set OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (a container whose user is root), or launch as another user")
}

// mpiLines routes mpirun's output: a line --tag-output marked
// ("[1,3]<stderr>:text") goes to the stream it came from as "[rank 3]
// text", any other line (mpirun's own) as "[mpirun] line" to stderr;
// failed keeps the first rank failure mpirun reports.
type mpiLines struct {
	stdout, stderr io.Writer
	failed         string
	exitCode       bool // failed names a rank whose exit code is on a line to come
	// mpirun's lines: a tagged line, a rank killed by a signal, MPI_Abort,
	// a rank's name and its exit code.
	tagged, signal, abort, exitName, codeLine *regexp.Regexp
}

func newMPILines(stdout, stderr io.Writer) *mpiLines {
	return &mpiLines{stdout: stdout, stderr: stderr,
		tagged:   regexp.MustCompile(`^\[\d+,(\d+)\]<(stdout|stderr)>:(.*)$`),
		signal:   regexp.MustCompile(`process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+)(?: \(([^)]*)\))?`),
		abort:    regexp.MustCompile(`MPI_ABORT was invoked on rank (\d+)`),
		exitName: regexp.MustCompile(`Process name: \[\[\d+,\d+\],(\d+)\]`),
		codeLine: regexp.MustCompile(`Exit code:\s*(\d+)`)}
}

func (m *mpiLines) sink(_ int, line string, _ bool) {
	if t := m.tagged.FindStringSubmatch(line); t != nil {
		w := m.stdout
		if t[2] == "stderr" {
			w = m.stderr
		}
		fmt.Fprintf(w, "[rank %s] %s\n", t[1], t[3])
		return
	}
	if strings.Trim(line, "- ") != "" {
		fmt.Fprintf(m.stderr, "[mpirun] %s\n", line)
	}
	if m.exitCode {
		if c := m.codeLine.FindStringSubmatch(line); c != nil {
			m.failed, m.exitCode = strings.Replace(m.failed, "a non-zero status", "status "+c[1], 1), false
		}
		return
	}
	if m.failed != "" {
		return
	}
	if s := m.signal.FindStringSubmatch(line); s != nil {
		m.failed = fmt.Sprintf("rank %s was killed by signal %s", s[1], s[2])
		if s[3] != "" {
			m.failed += " (" + s[3] + ")"
		}
	} else if a := m.abort.FindStringSubmatch(line); a != nil {
		m.failed = fmt.Sprintf("rank %s ended the job (MPI_Abort; its reason is above)", a[1])
	} else if e := m.exitName.FindStringSubmatch(line); e != nil {
		m.failed, m.exitCode = fmt.Sprintf("rank %s exited with a non-zero status", e[1]), true
	}
}
