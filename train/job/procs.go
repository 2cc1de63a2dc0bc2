package job

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/cluster"
	"github.com/fanout-gnn/fanout/cluster/mpi"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/hybrid"
	"github.com/fanout-gnn/fanout/train/multigpu"
)

// rankFunc trains this process's one rank of a job on be, joined to the
// other processes' ranks by coll.
type rankFunc func(ctx context.Context, be backend.Backend, coll backend.Collective, desc string, mode train.Mode) error

// runProcesses trains a node classifier as one process of a job started by
// a launcher (joinProcesses) with the data-parallel driver over that one
// rank. Rank 0 writes the run directory and returns the summary.
func runProcesses(ctx context.Context, j *Job) (*train.Summary, error) {
	var sum *train.Summary
	err := joinProcesses(ctx, j, func(ctx context.Context, be backend.Backend, coll backend.Collective, desc string, mode train.Mode) error {
		s, xch, err := j.runRank(ctx, be, coll, desc, mode)
		if err == nil {
			sum = j.rankResult(s, xch)
		}
		return err
	})
	return sum, err
}

// joinProcesses joins this process to a job started by a launcher
// (torchrun, Slurm, mpirun) and runs its rank: it joins the rendezvous
// store, gets NCCL's id from rank 0, joins the job's NCCL communicator
// with the GPU LOCAL_RANK picks, and hands them to run. CPU processes
// reduce through MPI (joinMPI).
func joinProcesses(ctx context.Context, j *Job, run rankFunc) (err error) {
	l := j.Launch
	if j.Device == "cpu" {
		return joinMPI(ctx, j, run)
	}
	token, err := cluster.Token(os.Getenv)
	if err != nil {
		return err
	}
	copt := j.CUDA.Options()
	copt.Device = l.LocalRank
	have, err := cuda.DeviceCount(copt)
	if err != nil {
		return err
	}
	if err := l.CheckDevicesPerHost(have); err != nil {
		return err
	}
	noMulticast()
	nccl, err := cuda.LoadNCCL(j.CUDA.LibDir)
	if err != nil {
		return fmt.Errorf("several processes need NCCL: %w", err)
	}
	meet, err := cluster.Meet(ctx, l, token, j.Log)
	if err != nil {
		return err
	}
	finished := false
	defer func() { meet.Close(finished) }()
	var id cuda.UniqueID
	b, err := cluster.ShareID(ctx, meet.Client, l.Rank, "nccl-id", len(id.Internal), func() ([]byte, error) {
		id, err := nccl.GetUniqueID()
		return id.Internal[:], err
	})
	if err != nil {
		return err
	}
	copy(id.Internal[:], b)
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
	defer cluster.AbortOnFailure(meet.Client, comm.Abort)() // stops watching before comm.Close (deferred earlier, runs later)
	desc := fmt.Sprintf("rank %d of %d (%s), %s", l.Rank, l.WorldSize, l.Launcher, gpu.Name())
	if err := run(ctx, gpu, comm, desc, train.Replay); err != nil {
		if cerr := meet.Client.Err(); cerr != nil {
			return fmt.Errorf("%w (the job: %v)", err, cerr)
		}
		return err
	}
	finished = true
	return nil
}

// runRank trains this process's one rank of the job on be, joined by
// coll: it loads the data, fits the batch, places the features and runs
// the data-parallel driver (rank 0 alone writes). The exchange is nil
// unless the features are spread over the job's hosts.
func (j *Job) runRank(ctx context.Context, be backend.Backend, coll backend.Collective, desc string, mode train.Mode) (*train.Summary, *multigpu.Exchange, error) {
	l := j.Launch
	opt := j.Options
	if l.Rank != 0 {
		opt = train.Options{FeatureDType: opt.FeatureDType}
	}
	opt.Device = desc
	if err := j.taskOptions(&opt); err != nil {
		return nil, nil, err
	}
	ds, err := j.load()
	if err != nil {
		return nil, nil, err
	}
	defer ds.Close()
	cfg := j.Config // as loading fitted it to the dataset (prepareTyped)
	if err := j.groupBatch(&cfg, l.WorldSize, l.RankZero(j.Log)); err != nil {
		return nil, nil, err
	}
	j.fitBatch(&cfg, ds, l.WorldSize, l.RankZero(j.Log))
	if err := checkMemory(be, cfg, ds, max(l.LocalWorldSize, 1)); err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(j.Log, "training %s on %s, %s mode (global batch %d = %d x %d)\n", describeRun(cfg), desc, mode, cfg.Batch, l.WorldSize, cfg.Batch/l.WorldSize)
	if ds.Typed() { // every rank uploads every relation and feature table itself
		fmt.Fprintf(l.RankZero(j.Log), "placement: %s is typed: every relation and feature table on every rank\n", ds.Name)
	}
	ranks := []multigpu.Rank{{Backend: be, Coll: coll, Options: opt}}
	var xch *multigpu.Exchange
	if j.Placement.ShardFeatures == "hosts" {
		// hosts of RanksPerHost, or of the launcher's LOCAL_WORLD_SIZE
		perHost := j.Placement.RanksPerHost
		if perHost == 0 {
			perHost = l.LocalWorldSize
		}
		if xch, err = j.placeExchanged(ds, cfg, mode, ranks, perHost); err != nil {
			return nil, nil, err
		}
	}
	var tiers []*hybrid.Tier
	if mode == train.Hybrid { // each process's device keeps its own tiers
		if tiers, err = j.hybridRanks(ds, cfg, []backend.Backend{be}, ranks); err != nil {
			return nil, nil, err
		}
	}
	sum, err := multigpu.Run(ctx, ds, cfg, ranks, mode, j.Replay)
	for _, t := range tiers {
		printTier(j.Log, fmt.Sprintf("rank %d", l.Rank), t)
	}
	return sum, xch, err
}

// joinMPI runs run as one CPU process of a job started by mpirun: the
// gradients are all-reduced with MPI (Open MPI, loaded at run time). A rank
// that fails says why and ends the job (MPI_Abort), so that its peers do
// not wait for it in their next collective.
func joinMPI(ctx context.Context, j *Job, run rankFunc) (err error) {
	l := j.Launch
	m, err := mpi.Open()
	if err != nil {
		return err
	}
	defer m.Finalize()
	defer func() {
		if err != nil && m.Size() > 1 && ctx.Err() == nil { // a signal reaches every rank
			fmt.Fprintf(j.Log, "fanout train: rank %d of %d: %v; ending the job\n", l.Rank, l.WorldSize, err)
			m.Abort(1)
		}
	}()
	if m.Size() != l.WorldSize || m.Rank() != l.Rank {
		return fmt.Errorf("CPU processes reduce through MPI: start them with mpirun (MPI sees rank %d of %d, the %s variables say %d of %d)",
			m.Rank(), m.Size(), l.Launcher, l.Rank, l.WorldSize)
	}
	threads := j.Threads
	if threads == 0 {
		threads = max(1, runtime.NumCPU()/max(1, l.LocalWorldSize))
	}
	var be backend.Backend = cpu.New(threads)
	mode := resolve(j.Mode, be)
	if mode.Captures() { // before the communicator: its collectives are then recorded too
		be = WithCapture(be)
	}
	comm, err := mpi.NewComm(m, be)
	if err != nil {
		return err
	}
	desc := fmt.Sprintf("rank %d of %d (MPI), %s", l.Rank, l.WorldSize, be.Name())
	if err := run(ctx, be, comm, desc, mode); err != nil {
		return err
	}
	return comm.Err()
}

// rankResult is what a finished rank reports: on rank 0 what the exchange
// moved (said on the log) and the summary; nothing elsewhere.
func (j *Job) rankResult(sum *train.Summary, xch *multigpu.Exchange) *train.Summary {
	if j.Launch.Rank != 0 {
		return nil
	}
	printExchange(xch, j.Log)
	return sum
}
