package train

import (
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/nn"
)

// Options are the parts of a run that are not its hyper-parameters.
type Options struct {
	RunDir string // where checkpoints, metrics.jsonl and summary.json go; "" writes nothing
	// TensorBoard, when set, is a directory for TensorBoard event files: per
	// epoch the loss, accuracies, time and steps/s, and the mean training
	// loss of every 64 steps (in a group, rank 0's batches; set it on rank 0).
	TensorBoard string
	Resume      bool      // continue from RunDir/last.ckpt, which must exist
	Force       bool      // delete a run already in RunDir (without Resume or Force, one is an error)
	Progress    io.Writer // one line per epoch; nil is silent
	Device      string    // description for the summary
	// Mode is the driver the trainer will run under: with a capturing
	// mode (Replay, Hybrid: Mode.Captures) New provisions no conservative
	// envelope, as RunReplay and BenchReplay size a tight one; Auto and
	// Eager provision it for Run and Bench.
	Mode Mode
	// OnStep, when set, receives every training step's loss (in replay mode
	// it costs a host sync per step: for tests and diagnostics).
	OnStep func(epoch, step int, loss float32)
	// Parallel, when set, makes the trainer one rank of a data-parallel
	// group (parallel.go): Config.Batch is the global batch, which must
	// divide by the group's size. Only the rank given a RunDir writes.
	Parallel backend.Collective
	// Features, when set, serves the features instead of a table uploaded
	// whole to the backend (the hybrid mode's tiered store); the trainer
	// frees it on Close.
	Features featstore.Store
	// TypedFeatures, when set, serve a typed dataset's feature tables, one
	// store per vertex type (Dataset.Types' order), instead of tables
	// uploaded whole (the hybrid mode's tiered stores); a nil entry
	// uploads that type's table as usual, and a featureless type's must be
	// nil (its learned rows stay resident). The trainer frees them on
	// Close; where New fails, the caller frees them (featstore's stores
	// take a second Free).
	TypedFeatures []featstore.Store
	// Graph, when set, is the topology the trainer samples from instead of
	// uploading the dataset's graph (a rank's PeerGraph, whose lists are
	// spread over a group's devices; train/multigpu's PlaceTopology).
	// It must have the dataset's vertices and edges.
	Graph backend.Graph
	// FeatureDType is how features are held on the backend: backend.F32
	// or backend.BF16 (half the bytes gathered and, in the hybrid mode,
	// sent over PCIe; float32 values rounded to bfloat16); 0 holds them as
	// the dataset does (Dataset.FeatureDType), uploaded in place. F32 over
	// a bfloat16 dataset widens the table as it is uploaded (4 bytes a
	// value on the backend).
	FeatureDType backend.DType
	// GatherRows makes every step gather the bottom layer's input rows,
	// even where the model could read them from a resident table in place
	// (nn.Model.ReadsTable; the default then): for comparison.
	GatherRows bool
	// OnProgress, when set, hears how far long work has gone: the steps of
	// an epoch ("epoch 3/20") and the batches of an evaluation
	// ("evaluate"), done of total, as they are issued (the replay driver
	// issues ahead of the device). A stage of "" means the work is over.
	OnProgress func(stage string, done, total int)
	// Task is what the run learns; nil is node classification (NodeTask).
	// It must be the task Config.Task names.
	Task Task
	// OnEpoch, when set, hears every epoch's figures as it ends.
	OnEpoch func(EpochStats)
	// KeepBest keeps the best model's parameters in host memory as well
	// as in RunDir's best.ckpt, for UseBest when there is no run
	// directory (every rank of a group keeps its own copy).
	KeepBest bool
	// OnFinish, when set, runs once the last epoch is trained and the
	// summary written, with the trainer (on every rank of a group, which
	// must then issue the same collectives): the job writes what is asked
	// of the best model there (UseBest).
	OnFinish func(*Trainer) error
}

// State is where a run stands; it is saved in checkpoints.
type State = checkpoint.State

// Trainer trains one model on one dataset with one backend.
type Trainer struct {
	cfg   Config
	opt   Options
	be    backend.Backend
	ds    *dataset.Dataset
	in    *Inputs
	head  Head // the task's part (Options.Task bound to this trainer)
	model *nn.Model
	plan  *Plan
	eval  *Plan       // plan for sampled evaluation (the training plan)
	full  *fullLogits // cached logits of layer-wise inference (Config.FullEval)
	state State
	adam  backend.AdamConfig
	fp    *checkpoint.DatasetInfo // the dataset's fingerprint, once computed
	run   *checkpoint.RunDir      // the locked run directory, when Options.RunDir is set

	noReduce     bool                   // the replay driver's warm-up step skips the group's all-reduce
	replayMargin float64                // the replay driver's envelope margin (0 until it starts)
	replayAhead  int                    // the replay driver's lookahead, its plans but the trainer's (0 until it starts)
	rep          *replayer              // the running replay driver, which also captures evaluation
	tb           *scalars               // the TensorBoard event file (Options.TensorBoard), while a run writes it
	loop         *epochLoop             // the epoch loop's metrics file, clock and target, while a run trains
	best         *checkpoint.Checkpoint // the best model's snapshot (Options.KeepBest)
	seeds        epochShuffle
	lossMin      float64 // the lowest epoch loss of this run so far (0: none yet), for checkLoss
}

// New uploads the dataset, binds the task, builds the model and
// provisions the plans.
func New(be backend.Backend, ds *dataset.Dataset, cfg Config, opt Options) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if c := opt.Parallel; c != nil && (c.Size() < 1 || cfg.Batch%c.Size() != 0 || c.Rank() < 0 || c.Rank() >= c.Size()) {
		return nil, fmt.Errorf("batch: %d items do not split evenly over %d devices (rank %d); choose a multiple of %d", cfg.Batch, c.Size(), c.Rank(), c.Size())
	}
	task := opt.Task
	if task == nil {
		task = NodeTask{}
	}
	if task.Name() != cfg.TaskName() {
		return nil, fmt.Errorf("train: the configuration's task is %s, the trainer was given %s", cfg.TaskName(), task.Name())
	}
	if err := cfg.CheckDataset(ds); err != nil {
		return nil, err
	}
	if ds.Typed() {
		if err := typedRefuses(ds, opt); err != nil {
			return nil, err
		}
	} else if opt.TypedFeatures != nil {
		return nil, fmt.Errorf("train: per-type feature stores for %s, which has one vertex type (give Options.Features)", ds.Name)
	}
	t := &Trainer{cfg: cfg, opt: opt, be: be, ds: ds,
		adam: backend.AdamConfig{LR: cfg.LR, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: cfg.WeightDecay}}
	var err error
	if t.run, err = t.openRunDir(); err != nil {
		return nil, err
	}
	if err = t.newSchedule(); err != nil {
		t.Close()
		return nil, err
	}
	if t.in, err = t.upload(); err != nil {
		t.Close()
		return nil, err
	}
	if t.head, err = task.Bind(t); err != nil {
		t.Close()
		return nil, err
	}
	if t.model, err = nn.NewModel(be, t.modelConfig(), cfg.Seed); err != nil {
		t.Close()
		return nil, err
	}
	t.syncNorm()
	if opt.Mode.Captures() {
		// The replay driver provisions a tight plan when it starts.
		return t, nil
	}
	if t.plan, err = t.newPlan(cfg.Fanouts); err != nil {
		t.Close()
		return nil, err
	}
	// With FullEval, evaluation runs layer-wise inference (infer.go), which
	// sizes its own chunks; sampled evaluation uses the training plan.
	t.eval = t.plan
	return t, nil
}

// upload makes the dataset resident, features through Options.Features
// when given.
func (t *Trainer) upload() (*Inputs, error) {
	if t.ds.Typed() {
		return uploadTyped(t.be, t.ds, t.opt.TypedFeatures, t.opt.FeatureDType, EmbedDim(t.ds, t.cfg.EmbedFeatureless), t.cfg.Seed)
	}
	f := t.opt.Features
	if g := t.opt.Graph; g != nil && (g.NumNodes() != t.ds.Graph.NumNodes || g.NumEdges() != t.ds.Graph.NumEdges()) {
		return nil, fmt.Errorf("graph: %d vertices and %d edges, the dataset has %d and %d", g.NumNodes(), g.NumEdges(), t.ds.Graph.NumNodes, t.ds.Graph.NumEdges())
	}
	if f == nil {
		in, err := uploadInputs(t.be, t.ds, nil, t.opt.Graph)
		if err != nil {
			return nil, err
		}
		if in.Feat, err = featstore.UploadAs(t.be, t.ds.FeatureTable(), t.ds.FeatDim, t.opt.FeatureDType); err != nil {
			in.Free(t.be)
			return nil, err
		}
		return in, nil
	}
	if f.Rows() != t.ds.Graph.NumNodes || f.Dim() != t.ds.FeatDim {
		return nil, fmt.Errorf("feature store: %d x %d rows, the dataset has %d x %d", f.Rows(), f.Dim(), t.ds.Graph.NumNodes, t.ds.FeatDim)
	}
	return uploadInputs(t.be, t.ds, f, t.opt.Graph)
}

// newPlan provisions a plan for the conservative envelope of fanouts and
// reserves the model's workspace for it.
func (t *Trainer) newPlan(fanouts []int) (*Plan, error) {
	if t.ds.Typed() {
		return t.newTypedPlan()
	}
	return t.reservedPlan(fanouts, t.conservativeCaps(fanouts))
}

// reservedPlan allocates a plan for caps, shares it with the group and
// reserves the model's workspace for it.
func (t *Trainer) reservedPlan(fanouts []int, caps []nn.Caps) (*Plan, error) {
	p, err := t.makePlan(fanouts, caps)
	if err != nil {
		return nil, err
	}
	t.share(p)
	if err := t.model.Reserve(caps); err != nil {
		p.Free()
		return nil, err
	}
	return p, nil
}

// makePlan allocates a plan for caps with the task's batch. Where the
// model reads the features in place (tableInput), the plan holds no rows
// of its own; where it reads a tiered store's cached rows in place
// (tieredInput), its rows receive only the misses.
func (t *Trainer) makePlan(fanouts []int, caps []nn.Caps) (*Plan, error) {
	table := t.tableInput()
	dim := t.ds.FeatDim
	if table != nil {
		dim = 0
	}
	p, err := t.samplingPlan(fanouts, caps, dim)
	if err != nil {
		return nil, err
	}
	p.Table, p.Tiers = table, t.tieredInput()
	return p, nil
}

// samplingPlan allocates a plan of the step's seed capacity for caps with
// featDim-wide rows (0: none, a plan that only samples) and attaches the
// task's batch and parameters.
func (t *Trainer) samplingPlan(fanouts []int, caps []nn.Caps, featDim int) (*Plan, error) {
	p, err := NewPlan(t.be, t.seedCap(), fanouts, caps, featDim, t.rowType())
	if err != nil {
		return nil, err
	}
	if err := t.attach(p); err != nil {
		p.Free()
		return nil, err
	}
	return p, nil
}

// attach gives plan p the task's batch and parameters.
func (t *Trainer) attach(p *Plan) error {
	b, err := t.head.NewBatch(p)
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	p.Task, p.Params = b, t.head.Params()
	return nil
}

// seedCap is the seed capacity of this rank's step: the task's seeds for
// a batch of this rank's items.
func (t *Trainer) seedCap() int { return t.head.SeedCap(t.batch()) }

// readsInPlace says whether the model may read its bottom rows where the
// store keeps them (tableInput, tieredInput): its bottom layer can
// (nn.Model.ReadsTable), and Options.GatherRows is off.
func (t *Trainer) readsInPlace() bool {
	return !t.opt.GatherRows && t.in != nil && t.model.ReadsTable()
}

// tableInput is the feature table the model reads its bottom rows from in
// place (nn.Batch.Table), or nil where each step gathers them: the store
// keeps the whole table in backend memory (featstore.Direct), the model's
// bottom layer can read it (nn.Model.ReadsTable), and Options.GatherRows
// is off.
func (t *Trainer) tableInput() backend.Buffer {
	if !t.readsInPlace() {
		return nil
	}
	return t.directTable()
}

// directTable is the store's whole table in backend memory
// (featstore.Direct), or nil for any other store.
func (t *Trainer) directTable() backend.Buffer {
	if t.in == nil {
		return nil
	}
	if d, ok := t.in.Feat.(featstore.Direct); ok {
		return d.DeviceTable()
	}
	return nil
}

// rowType is the element type of the rows a step gathers: bfloat16 where
// the store keeps its whole table in backend memory as bfloat16
// (featstore.Direct, whose Gather copies such rows as they are) and the
// model's bottom layer reads bfloat16 rows (nn.Model.ReadsBF16Rows): half
// the bytes gathered and read, the same values. Float32 otherwise.
func (t *Trainer) rowType() backend.DType {
	if tb := t.directTable(); tb != nil && tb.DType() == backend.BF16 && t.model.ReadsBF16Rows() {
		return backend.BF16
	}
	return backend.F32
}

// tieredInput is the tiered store whose cached rows the model reads in
// place (nn.Batch.Tiered, the misses gathered into the plan's rows), or nil
// where each step gathers every row: the store keeps its rows in two tiers
// that ops read in place (featstore.InPlace) on a backend with the tiered
// ops, the model's bottom layer can read them (nn.Model.ReadsTable), and
// Options.GatherRows is off.
func (t *Trainer) tieredInput() featstore.InPlace {
	if !t.readsInPlace() {
		return nil
	}
	if _, err := backend.TieredOf(t.be); err != nil {
		return nil
	}
	if s, ok := t.in.Feat.(featstore.InPlace); ok {
		return s
	}
	return nil
}

// Inputs are the tables the step reads; a driver may set Inputs().Hot
// before training.
func (t *Trainer) Inputs() *Inputs { return t.in }

// Model is the trained model.
func (t *Trainer) Model() *nn.Model { return t.model }

// Head is the task's part of the trainer.
func (t *Trainer) Head() Head { return t.head }

// Config is the run's configuration.
func (t *Trainer) Config() Config { return t.cfg }

// Dataset is the trainer's dataset.
func (t *Trainer) Dataset() *dataset.Dataset { return t.ds }

// Backend is the backend the trainer runs on.
func (t *Trainer) Backend() backend.Backend { return t.be }

// Group is the trainer's collective when it is one rank of several; nil
// alone.
func (t *Trainer) Group() backend.Collective { return t.group() }

// Rank is the trainer's rank and its group's size (0 and 1 alone).
func (t *Trainer) Rank() (rank, size int) { return t.rankSize() }

// Params are every learnt tensor of the run: the model's, then the task's.
func (t *Trainer) Params() []*nn.Param {
	ps := append(append([]*nn.Param(nil), t.model.Params()...), t.head.Params()...)
	if ti := t.in.Typed; ti != nil {
		ps = append(ps, ti.Tables()...)
	}
	return ps
}

// State is where the run stands.
func (t *Trainer) State() State { return t.state }

// Close frees everything the trainer allocated on the backend.
func (t *Trainer) Close() {
	t.seeds.wait()
	t.dropFullLogits()
	if t.eval != nil && t.eval != t.plan {
		t.eval.Free()
	}
	if t.plan != nil {
		t.plan.Free()
	}
	if t.model != nil {
		t.model.Free()
	}
	if t.head != nil {
		t.head.Free()
	}
	if t.in != nil {
		t.in.Free(t.be)
	}
	t.freeSchedule()
	t.run.Close()
	t.run = nil
}

// progress reports how far a stage has gone (Options.OnProgress).
func (t *Trainer) progress(stage string, done, total int) {
	if t.opt.OnProgress != nil {
		t.opt.OnProgress(stage, done, total)
	}
}

// epochStage names the epoch in progress for OnProgress.
func (t *Trainer) epochStage() string {
	return fmt.Sprintf("epoch %d/%d", t.state.Epoch+1, t.cfg.Epochs)
}

// progressf writes a progress line when a writer is set.
func (t *Trainer) progressf(format string, a ...any) {
	if t.opt.Progress != nil {
		fmt.Fprintf(t.opt.Progress, format, a...)
	}
}

// sync waits for the backend and reports its error or the model's.
func (t *Trainer) sync() error {
	if err := t.be.Sync(); err != nil {
		return err
	}
	if g, ok := t.opt.Parallel.(interface{ Err() error }); ok {
		if err := g.Err(); err != nil {
			return fmt.Errorf("device group: %w", err)
		}
	}
	return t.model.Err()
}
