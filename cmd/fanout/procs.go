package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dist"
	"github.com/fanout-gnn/fanout/dist/mpi"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/multigpu"
)

// jobToken is the job's shared secret: FANOUT_TOKEN, or the first line of
// the file FANOUT_TOKEN_FILE names.
func jobToken(getenv func(string) string) (string, error) {
	if t := strings.TrimSpace(getenv("FANOUT_TOKEN")); t != "" {
		return t, nil
	}
	if f := getenv("FANOUT_TOKEN_FILE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("FANOUT_TOKEN_FILE: %w", err)
		}
		if t := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]); t != "" {
			return t, nil
		}
		return "", fmt.Errorf("FANOUT_TOKEN_FILE %s: the first line is empty", f)
	}
	return "", errors.New("a job of several processes needs a shared token: set FANOUT_TOKEN (or FANOUT_TOKEN_FILE) to the same secret in every process")
}

// gpusPerHost refuses more processes on a host than it has GPUs: two
// processes sharing one GPU would each hold a context and an NCCL rank on
// it, which NCCL does not allow within one communicator.
func gpusPerHost(l *dist.Launch, gpus int) error {
	local := l.LocalWorldSize
	if local == 0 {
		local = l.LocalRank + 1
	}
	if local > gpus {
		return fmt.Errorf("%d processes on this host but %d GPU(s): each process drives one GPU (LOCAL_RANK picks it); start at most %d per host", local, gpus, gpus)
	}
	return nil
}

// runProcesses trains as one process of a job started by a launcher
// (torchrun, Slurm, mpirun): it joins the rendezvous store, gets NCCL's id
// from rank 0, joins the job's NCCL communicator with the GPU LOCAL_RANK
// picks, and runs the data-parallel driver with that one rank. Rank 0
// writes the run directory.
func runProcesses(ctx context.Context, l *dist.Launch, rf *runFlags, cfg train.Config, opt train.Options, stdout, stderr io.Writer) error {
	if rf.device == "cpu" {
		return runMPI(ctx, l, rf, cfg, opt, stdout, stderr)
	}
	token, err := jobToken(os.Getenv)
	if err != nil {
		return err
	}
	cf := rf.cuda
	copt := cf.options()
	copt.Device = l.LocalRank
	have, err := cuda.DeviceCount(copt)
	if err != nil {
		return err
	}
	if err := gpusPerHost(l, have); err != nil {
		return err
	}
	if _, set := os.LookupEnv("NCCL_NVLS_ENABLE"); !set {
		os.Setenv("NCCL_NVLS_ENABLE", "0")
	}
	nccl, err := cuda.LoadNCCL(cf.libDir)
	if err != nil {
		return fmt.Errorf("several processes need NCCL: %w", err)
	}
	addr := net.JoinHostPort(l.MasterAddr, strconv.Itoa(l.MasterPort))
	sopt := dist.Options{JoinTimeout: 5 * time.Minute, Log: stderr}
	finished := false
	if l.Rank == 0 {
		srv, err := dist.Serve(net.JoinHostPort("", strconv.Itoa(l.MasterPort)), l.WorldSize, token, sopt)
		if err != nil {
			return err
		}
		defer func() {
			// After this run finished (its client gone: deferred later,
			// it leaves first), the store stays up until every rank
			// has left it: a rank still finishing would otherwise lose
			// it and abort its communicator, as after a peer's death.
			if finished {
				srv.Drain(storeDrain)
			}
			srv.Close()
		}()
	}
	client, err := dist.Join(ctx, addr, l.Rank, l.WorldSize, token, sopt)
	if err != nil {
		return err
	}
	defer client.Close()
	id, err := exchangeID(ctx, client, nccl, l.Rank)
	if err != nil {
		return err
	}
	gpu, err := cuda.New(copt)
	if err != nil {
		return err
	}
	defer gpu.Close()
	comm, err := nccl.NewCommRank(gpu, l.WorldSize, l.Rank, id)
	if err != nil {
		return err
	}
	defer comm.Close()
	defer abortOnFailure(client, comm)() // stops watching before comm.Close (deferred earlier, runs later)
	desc := fmt.Sprintf("rank %d of %d (%s), %s", l.Rank, l.WorldSize, l.Launcher, gpu.Name())
	if l.Rank != 0 {
		opt = train.Options{FeatureDType: opt.FeatureDType}
	}
	opt.Device = desc
	ds, err := loadDataset(rf.src, rf.threads, stderr)
	if err != nil {
		return err
	}
	defer ds.Close()
	if err := rf.groupBatch(&cfg, l.WorldSize, rankZero(l, stderr)); err != nil {
		return err
	}
	rf.fitBatch(&cfg, ds, l.WorldSize, rankZero(l, stderr))
	fmt.Fprintf(stderr, "training %s (global batch %d = %d x %d) on %s, replay mode\n", cfg.Model, cfg.Batch, l.WorldSize, cfg.Batch/l.WorldSize, desc)
	ranks := []multigpu.Rank{{Backend: gpu, Coll: comm, Options: opt}}
	xch, err := placeProcessFeatures(rf, l, ds, cfg, "replay", ranks, stderr)
	if err != nil {
		return err
	}
	sum, err := multigpu.Run(ctx, ds, cfg, ranks, true, rf.replay())
	if err != nil {
		if cerr := client.Err(); cerr != nil {
			return fmt.Errorf("%w (the job: %v)", err, cerr)
		}
		return err
	}
	if l.Rank == 0 {
		printExchange(xch, stderr)
		printSummary(stdout, sum)
	}
	finished = true
	return nil
}

// storeDrain is how long rank 0's store waits, after rank 0 finished, for
// the other ranks to finish and leave.
const storeDrain = 5 * time.Minute

// abortOnFailure aborts comm when the job fails (a peer died, the store is
// gone), so that this rank does not hang in NCCL, until the returned
// function is called: from then on, and never at the same time as it,
// the communicator is the caller's to close.
func abortOnFailure(client *dist.Client, comm *cuda.Comm) (stop func()) {
	var mu sync.Mutex
	ended := make(chan struct{})
	go func() {
		select {
		case <-client.Failed():
		case <-ended:
			return
		}
		mu.Lock()
		defer mu.Unlock()
		select {
		case <-ended:
			return
		default:
		}
		if err := client.Err(); err != nil && !strings.Contains(err.Error(), "closed") {
			comm.Abort(err)
		}
	}()
	return func() {
		mu.Lock()
		close(ended)
		mu.Unlock()
	}
}

// rankZero is w on the job's rank 0 and io.Discard on the others: a note
// about the whole job is said once.
func rankZero(l *dist.Launch, w io.Writer) io.Writer {
	if l.Rank == 0 {
		return w
	}
	return io.Discard
}

// placeProcessFeatures spreads the features over the job's processes with
// --shard-features hosts (hosts of --ranks-per-host, or of the launcher's
// LOCAL_WORLD_SIZE); otherwise every process holds the whole table and
// the result is nil.
func placeProcessFeatures(rf *runFlags, l *dist.Launch, ds *dataset.Dataset, cfg train.Config, mode string, ranks []multigpu.Rank, stderr io.Writer) (*multigpu.Exchange, error) {
	if rf.shardFeatures != "hosts" {
		return nil, nil
	}
	perHost := rf.ranksPerHost
	if perHost == 0 {
		perHost = l.LocalWorldSize
	}
	return placeExchanged(rf, ds, cfg, mode, ranks, perHost, stderr)
}

// exchangeID makes NCCL's id on rank 0 and hands it to every rank through
// the store.
func exchangeID(ctx context.Context, c *dist.Client, nccl *cuda.NCCL, rank int) (cuda.UniqueID, error) {
	var id cuda.UniqueID
	if rank == 0 {
		var err error
		if id, err = nccl.GetUniqueID(); err != nil {
			return id, err
		}
		return id, c.Set(ctx, "nccl-id", id.Internal[:])
	}
	b, err := c.Get(ctx, "nccl-id")
	if err != nil {
		return id, err
	}
	if len(b) != len(id.Internal) {
		return id, fmt.Errorf("rendezvous: NCCL's id has %d bytes, want %d", len(b), len(id.Internal))
	}
	copy(id.Internal[:], b)
	return id, nil
}

// runMPI trains as one CPU process of a job started by mpirun: the
// gradients are all-reduced with MPI (Open MPI, loaded at run time). A rank
// that fails says why and ends the job (MPI_Abort), so that its peers do
// not wait for it in their next collective.
func runMPI(ctx context.Context, l *dist.Launch, rf *runFlags, cfg train.Config, opt train.Options, stdout, stderr io.Writer) (err error) {
	m, err := mpi.Open()
	if err != nil {
		return err
	}
	defer m.Finalize()
	defer func() {
		if err != nil && m.Size() > 1 && ctx.Err() == nil { // a signal reaches every rank
			fmt.Fprintf(stderr, "fanout train: rank %d of %d: %v; ending the job\n", l.Rank, l.WorldSize, err)
			m.Abort(1)
		}
	}()
	if m.Size() != l.WorldSize || m.Rank() != l.Rank {
		return fmt.Errorf("CPU processes reduce through MPI: start them with mpirun (MPI sees rank %d of %d, the %s variables say %d of %d)",
			m.Rank(), m.Size(), l.Launcher, l.Rank, l.WorldSize)
	}
	threads := rf.threads
	if threads == 0 {
		threads = max(1, runtime.NumCPU()/max(1, l.LocalWorldSize))
	}
	var be backend.Backend = cpu.New(threads)
	mode := resolveMode(rf.mode, be)
	if mode == "replay" {
		be = withCapture(be)
	}
	comm, err := mpi.NewComm(m, be)
	if err != nil {
		return err
	}
	desc := fmt.Sprintf("rank %d of %d (MPI), %s", l.Rank, l.WorldSize, be.Name())
	if l.Rank != 0 {
		opt = train.Options{FeatureDType: opt.FeatureDType}
	}
	opt.Device = desc
	ds, err := loadDataset(rf.src, rf.threads, stderr)
	if err != nil {
		return err
	}
	defer ds.Close()
	if err := rf.groupBatch(&cfg, l.WorldSize, rankZero(l, stderr)); err != nil {
		return err
	}
	rf.fitBatch(&cfg, ds, l.WorldSize, rankZero(l, stderr))
	if err := checkHostMemory(be, cfg, ds, max(l.LocalWorldSize, 1)); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "training %s (global batch %d = %d x %d) on %s, %s mode\n", cfg.Model, cfg.Batch, l.WorldSize, cfg.Batch/l.WorldSize, desc, mode)
	ranks := []multigpu.Rank{{Backend: be, Coll: comm, Options: opt}}
	xch, err := placeProcessFeatures(rf, l, ds, cfg, mode, ranks, stderr)
	if err != nil {
		return err
	}
	sum, err := multigpu.Run(ctx, ds, cfg, ranks, mode == "replay", rf.replay())
	if err == nil {
		err = comm.Err()
	}
	if err != nil {
		return err
	}
	if l.Rank == 0 {
		printExchange(xch, stderr)
		printSummary(stdout, sum)
	}
	return nil
}
