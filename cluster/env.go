// Package cluster holds what several processes of one training job need to
// find each other, the way PyTorch jobs do: the launcher's environment
// (torchrun, Slurm, Open MPI's mpirun) read into a typed Launch, and a small
// rendezvous store (store.go) at MASTER_ADDR:MASTER_PORT through which the
// ranks exchange the collective library's id. The data path is the
// collective library's (NCCL, MPI), never this package's.
//
// Nothing here reads the process environment: the command line passes it in.
package cluster

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fanout-gnn/fanout/internal/quote"
)

// Launch is one process's place in a job.
type Launch struct {
	Launcher       string // "torchrun", "slurm" or "mpirun"
	Rank           int    // 0-based, across the job
	WorldSize      int    // processes in the job
	LocalRank      int    // 0-based, on this host
	LocalWorldSize int    // processes on this host (0 when the launcher does not say)
	MasterAddr     string // rank 0's host, where the rendezvous store listens
	MasterPort     int
}

// DefaultPort is MASTER_PORT when a launcher does not set one (torchrun's).
const DefaultPort = 29500

// FromEnv reads the launcher's variables from env (as os.Environ gives
// them, KEY=VALUE). It returns nil and no error when no launcher set any,
// and an error naming the variable when one is missing or inconsistent.
func FromEnv(environ []string) (*Launch, error) {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	switch {
	case env["RANK"] != "" || env["WORLD_SIZE"] != "":
		return fromTorchrun(env)
	case env["SLURM_PROCID"] != "" && env["SLURM_NTASKS"] != "":
		return fromSlurm(env)
	case env["OMPI_COMM_WORLD_RANK"] != "":
		return fromMPI(env)
	}
	return nil, nil
}

// ints reads the named variables as integers; a missing one is an error
// unless optional, and reads as 0.
func ints(env map[string]string, launcher string, names []string, optional map[string]bool) ([]int, error) {
	out := make([]int, len(names))
	for i, n := range names {
		v, ok := env[n]
		if !ok || v == "" {
			if optional[n] {
				continue
			}
			return nil, fmt.Errorf("%s: %s is not set", launcher, n)
		}
		x, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || x < 0 {
			return nil, fmt.Errorf("%s: %s=%s is not a count", launcher, n, quote.Quote(v))
		}
		out[i] = x
	}
	return out, nil
}

// launcherVars names a launcher's variables: rank, world size, local rank
// and local world size (the last two optional).
type launcherVars struct {
	name string
	vars [4]string
}

var (
	torchrunVars = launcherVars{"torchrun", [4]string{"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"}}
	slurmVars    = launcherVars{"slurm", [4]string{"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"}}
	mpirunVars   = launcherVars{"mpirun", [4]string{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"}}
)

// fromVars reads a launcher's counts and MASTER_ADDR and MASTER_PORT.
func fromVars(env map[string]string, lv launcherVars) (*Launch, error) {
	v, err := ints(env, lv.name, lv.vars[:], map[string]bool{lv.vars[2]: true, lv.vars[3]: true})
	if err != nil {
		return nil, err
	}
	l := &Launch{Launcher: lv.name, Rank: v[0], WorldSize: v[1], LocalRank: v[2], LocalWorldSize: v[3], MasterAddr: env["MASTER_ADDR"], MasterPort: DefaultPort}
	if p := env["MASTER_PORT"]; p != "" {
		if l.MasterPort, err = port(lv.name, p); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func fromTorchrun(env map[string]string) (*Launch, error) {
	l, err := fromVars(env, torchrunVars)
	if err != nil {
		return nil, err
	}
	if l.MasterAddr == "" {
		return nil, fmt.Errorf("torchrun: MASTER_ADDR is not set")
	}
	return l, l.check()
}

// fromSlurm takes rank 0's host from the node list unless MASTER_ADDR says.
func fromSlurm(env map[string]string) (*Launch, error) {
	l, err := fromVars(env, slurmVars)
	if err != nil {
		return nil, err
	}
	if l.MasterAddr == "" {
		if l.MasterAddr, err = FirstHost(env["SLURM_JOB_NODELIST"]); err != nil {
			return nil, err
		}
	}
	return l, l.check()
}

func fromMPI(env map[string]string) (*Launch, error) {
	l, err := fromVars(env, mpirunVars)
	if err != nil {
		return nil, err
	}
	return l, l.check()
}

func port(launcher, s string) (int, error) {
	p, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("%s: MASTER_PORT=%s is not a port", launcher, quote.Quote(s))
	}
	return p, nil
}

// check names the first inconsistent value.
func (l *Launch) check() error {
	switch {
	case l.WorldSize < 1:
		return fmt.Errorf("%s: the world size is %d", l.Launcher, l.WorldSize)
	case l.Rank >= l.WorldSize:
		return fmt.Errorf("%s: rank %d of a world of %d", l.Launcher, l.Rank, l.WorldSize)
	case l.LocalWorldSize > 0 && l.LocalRank >= l.LocalWorldSize:
		return fmt.Errorf("%s: local rank %d of %d on this host", l.Launcher, l.LocalRank, l.LocalWorldSize)
	case l.LocalWorldSize > l.WorldSize:
		return fmt.Errorf("%s: %d processes on this host in a world of %d", l.Launcher, l.LocalWorldSize, l.WorldSize)
	}
	return nil
}

// FirstHost is the first host of a Slurm node list such as
// "gpu[03-05,07],cpu1" (here "gpu03"), keeping the range's zero padding.
func FirstHost(list string) (string, error) {
	list = strings.TrimSpace(list)
	if list == "" {
		return "", fmt.Errorf("slurm: SLURM_JOB_NODELIST is not set (set MASTER_ADDR)")
	}
	i := strings.IndexAny(list, "[,")
	if i < 0 {
		return list, nil
	}
	if list[i] == ',' {
		return list[:i], nil
	}
	end := strings.IndexByte(list[i:], ']')
	if end < 0 {
		return "", fmt.Errorf("slurm: SLURM_JOB_NODELIST=%s has an unclosed [", quote.Quote(list))
	}
	first := strings.FieldsFunc(list[i+1:i+end], func(r rune) bool { return r == ',' || r == '-' })
	if len(first) == 0 || first[0] == "" {
		return "", fmt.Errorf("slurm: SLURM_JOB_NODELIST=%s has an empty range", quote.Quote(list))
	}
	return list[:i] + first[0], nil
}
