package job

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/linksplit"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/link"
)

// Outputs are what a job writes of the best model once it trained.
type Outputs struct {
	// Embeddings, when set, is a .npy file that gets every vertex's
	// embedding (float32 [N, width]): the link task's model output, or a
	// node classifier's last hidden layer.
	Embeddings string
	// Scores, when set, is a .npy file of vertex pairs (int32 or int64
	// [pairs, 2]) that a link run's best model scores into ScoresFile in
	// the run directory (float32 [pairs]).
	Scores string
}

// Files a link run writes into its run directory from its best model: its
// encoder under PyTorch Geometric's names, its MLP decoder as
// torch.nn.Sequential's state dict, and the scores of --scores's pairs.
const (
	EncoderFile = "encoder.safetensors"
	DecoderFile = "decoder.safetensors"
	ScoresFile  = "scores.npy"
)

// NewTask is the task a configuration names.
func NewTask(cfg train.Config) (train.Task, error) {
	switch cfg.TaskName() {
	case train.TaskNode:
		return train.NodeTask{}, nil
	case train.TaskLink:
		return link.Task{}, nil
	}
	return nil, &train.SettingError{Key: "task", Problem: fmt.Sprintf("%s, want node or link", Shown(cfg.Task))}
}

// checkTask refuses, before any work, what the job's task does not have:
// the link task's placements (every device holds the whole graph and
// feature table) and hot vertices, outputs of another task, and outputs
// that would replace files without --force.
func (j *Job) checkTask() error {
	isLink := j.Config.TaskName() == train.TaskLink
	p := j.Placement
	if isLink {
		switch {
		case p.Replicate != "" && p.Replicate != "all":
			return fmt.Errorf("replicate: %s: the link task holds the whole graph on every device (give --replicate all, or none)", Shown(p.Replicate))
		case p.ShardFeatures == "on" || p.ShardFeatures == "hosts":
			return fmt.Errorf("shard-features: %s: the link task holds the whole feature table on every device (off or auto)", p.ShardFeatures)
		case !j.Hybrid.HotAuto && j.Hybrid.HotRatio != 0:
			return fmt.Errorf("hot-ratio: %s: the link task's hybrid mode has no hot vertices (its feature rows are tiered, its steps all on the device); give --hot-ratio 0", j.Hybrid.HotSpec)
		}
	}
	o := j.Outputs
	switch {
	case o.Scores != "" && !isLink:
		return fmt.Errorf("scores: %s: pairs are scored by a link predictor (--task link)", Shown(o.Scores))
	case o.Scores != "" && j.Options.RunDir == "":
		return fmt.Errorf("scores: %s: the scores go into the run directory; give --out", Shown(o.Scores))
	}
	if o.Embeddings != "" && !j.Options.Force && !j.Options.Resume {
		if err := notThere("embeddings", o.Embeddings); err != nil {
			return err
		}
	}
	return j.checkLegacyRun()
}

// notThere refuses to replace an existing file named by flag.
func notThere(flag, path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", flag, err)
	case st.IsDir():
		return fmt.Errorf("%s: %s is a directory; give a file name", flag, Shown(path))
	}
	return fmt.Errorf("%s: %s exists; give --force to replace it", flag, Shown(path))
}

// checkLegacyRun handles a run directory that a link run of an earlier
// version wrote (link_last.ckpt, link_state.json): --resume turns it into
// today's layout and continues it, --force removes it, and a new run is
// refused there.
func (j *Job) checkLegacyRun() error {
	dir := j.Options.RunDir
	if dir == "" || !link.HasLegacyRun(dir) || (j.Launch != nil && j.Launch.Rank != 0) {
		return nil
	}
	switch {
	case j.Options.Resume:
		if err := link.MigrateRun(dir); err != nil {
			return err
		}
		fmt.Fprintf(j.Log, "%s: a link run of an earlier version, moved to today's layout (last.ckpt, best.ckpt, metrics.jsonl) to resume\n", dir)
		return nil
	case j.Options.Force:
		return link.RemoveLegacyRun(dir)
	}
	return fmt.Errorf("%s holds a link run: --resume continues it, --force starts over", dir)
}

// prepare readies a loaded dataset for the job's task: a preset generated
// in memory for a link job is split 0.85/0.05/0.1 with one fixed negative
// per held-out edge (keyed by the run's seed); a batch that holds every
// training edge of a link job that excludes them is noted.
func (j *Job) prepare(ds *dataset.Dataset) error {
	if err := j.prepareTyped(ds); err != nil {
		return err
	}
	cfg := j.Config
	if cfg.TaskName() != train.TaskLink {
		return nil
	}
	if ds.Link == nil && j.Source.Data == "" {
		o := linksplit.Options{Fractions: linksplit.Fractions{Train: 0.85, Valid: 0.05, Test: 0.1}, Negatives: 1, Seed: cfg.Seed}
		if err := linksplit.Apply(ds, o); err != nil {
			return err
		}
		fmt.Fprintf(j.Log, "split %s's edges 0.85/0.05/0.1 for the link task: %d training edges\n", ds.Name, dataset.Pairs(ds.Link.Train))
	}
	if ds.Link != nil && cfg.Link.Exclude != train.ExcludeNone && cfg.Batch >= dataset.Pairs(ds.Link.Train) {
		fmt.Fprintf(j.Log, "note: a batch of %d edges holds all %d training edges, and --exclude %s takes every one out of the sampled neighbourhoods: training sees no edges at all; use --exclude none, or a smaller --batch\n",
			cfg.Batch, dataset.Pairs(ds.Link.Train), cfg.Link.Exclude)
	}
	return nil
}

// taskOptions gives a rank's trainer options the job's task and, where the
// job writes outputs, the hook that writes them from the best model
// (rank 0 writes; every rank computes, as an evaluation's collectives
// need).
func (j *Job) taskOptions(opt *train.Options) error {
	task, err := NewTask(j.Config)
	if err != nil {
		return err
	}
	opt.Task = task
	if j.Outputs == (Outputs{}) && (task.Name() != train.TaskLink || j.Options.RunDir == "") {
		return nil
	}
	opt.KeepBest = true
	dir := j.Options.RunDir
	opt.OnFinish = func(tr *train.Trainer) error {
		return j.writeOutputs(tr, dir)
	}
	return nil
}

// writeOutputs writes what the job asks of the trainer's best model: the
// embeddings; for a link run, the encoder and decoder into the run
// directory and the pairs' scores.
func (j *Job) writeOutputs(tr *train.Trainer, dir string) error {
	if err := tr.UseBest(); err != nil {
		return err
	}
	rank, _ := tr.Rank()
	w := outputWriter{log: j.Log, write: rank == 0, data: j.Source.Data}
	if tr.Config().TaskName() != train.TaskLink {
		return w.nodeEmbeddings(tr, j.Outputs.Embeddings)
	}
	if dir != "" && w.write {
		if err := w.linkModel(tr, dir); err != nil {
			return err
		}
	}
	scores := ""
	if j.Outputs.Scores != "" {
		scores = filepath.Join(dir, ScoresFile)
	}
	return w.linkOutputs(tr, j.Outputs.Embeddings, j.Outputs.Scores, scores)
}

// describeRun names what a run trains: "link predictor (sage, 2 layers, hidden
// 64, fanouts 10,5, batch 256 edges, dot decoder, 1 uniform negative per
// edge, exclude reverse)" or "sage (2 layers, hidden 64, fanouts 10,5,
// batch 256)".
func describeRun(cfg train.Config) string {
	s := fmt.Sprintf("%s (%d layers, hidden %d, fanouts %s, batch %d", cfg.Model, cfg.Layers, cfg.Hidden, train.FormatFanouts(cfg.Fanouts), cfg.Batch)
	if cfg.TaskName() != train.TaskLink {
		return s + ")"
	}
	l := cfg.Link
	return fmt.Sprintf("link predictor %s edges, %s decoder, %s, exclude %s)", s, l.Decoder, l.NegativesText(), l.Exclude)
}

// trainItems are the training items of the job's task in ds, and what
// they are.
func trainItems(cfg train.Config, ds *dataset.Dataset) (int, string) {
	if cfg.TaskName() == train.TaskLink {
		if ds.Link == nil {
			return 0, "edges"
		}
		return dataset.Pairs(ds.Link.Train), "edges"
	}
	return len(ds.Train), "vertices"
}

// prepareTyped fits the job to a typed dataset: the default model becomes
// rsage (the one-type default would be refused), without the one-type
// models' GPU default of bfloat16 bottom products (fitBottom); what typed graphs do
// not train with is refused (typedRefusal); the configuration then must
// suit the dataset (train.Config.CheckDataset). Every rank of a launched
// job loads the dataset, so each fits its own configuration alike.
func (j *Job) prepareTyped(ds *dataset.Dataset) error {
	if ds.Typed() && !j.ModelGiven && !j.Config.TypedModel() {
		fmt.Fprintf(j.Log, "%s is typed (%d vertex types, %d relations): training rsage (GraphSAGE per relation; --model rgcn for the relational GCN, rgat for the relational GAT)\n", ds.Name, len(ds.Types), len(ds.Relations))
		j.Config.Model = nn.KindRSAGE
	}
	if ds.Typed() {
		if err := j.typedRefusal(ds); err != nil {
			return err
		}
	}
	if o := j.Outputs.Embeddings; ds.Typed() && o != "" && !j.Options.Force && !j.Options.Resume {
		var types []string // a typed model writes one file per type
		for _, vt := range ds.Types {
			types = append(types, vt.Name)
		}
		if err := typedEmbeddingsThere(o, types); err != nil {
			return err
		}
	}
	j.fitBottom(ds)
	return j.Config.CheckDataset(ds)
}

// fitBottom drops the GPU default of bfloat16 bottom products where the
// model has no bfloat16 bottom layer at the dataset's input width (typed
// models; GAT with input as wide as its hidden layer, or odd widths:
// nn.Config.BF16BottomApplies), so that the run's configuration says how
// it multiplies.
func (j *Job) fitBottom(ds *dataset.Dataset) {
	if j.BottomDefault && !j.Config.ModelConfig(ds.FeatDim, 1).BF16BottomApplies() {
		j.Config.BottomProducts, j.BottomDefault = "", false
	}
}

// typedRefusal names, in one line, what a typed dataset does not train
// with yet: features spread over hosts; in the hybrid mode a group of
// devices or processes and hot vertices; and, on several devices or
// processes, a type without features (its learned rows, trained by sparse
// Adam on the rows a step reads, are one device's).
func (j *Job) typedRefusal(ds *dataset.Dataset) error {
	featureless := slices.IndexFunc(ds.Types, func(ty dataset.VertexType) bool { return ty.FeatDim == 0 })
	switch {
	case j.Placement.ShardFeatures == "hosts":
		return fmt.Errorf("shard-features: %s is typed, and typed graphs keep every feature table on every rank for now (drop --shard-features hosts)", ds.Name)
	case j.Mode == train.Hybrid && j.Launch != nil:
		return fmt.Errorf("launch: %s is typed, and the hybrid mode trains typed graphs on one device for now (drop the launcher, or use --mode replay)", ds.Name)
	case j.Mode == train.Hybrid && j.Devices != 0:
		return fmt.Errorf("devices: %s is typed, and the hybrid mode trains typed graphs on one device for now (drop --devices, or use --mode replay)", ds.Name)
	case j.Mode == train.Hybrid && !j.Hybrid.HotAuto && j.Hybrid.HotRatio != 0:
		return fmt.Errorf("hot-ratio: %s: %s is typed, and the hybrid mode's hot vertices are one-type graphs' (give --hot-ratio 0)", j.Hybrid.HotSpec, ds.Name)
	case featureless >= 0 && j.Launch != nil && j.Launch.WorldSize > 1:
		return fmt.Errorf("launch: %s is typed, and its type %s has no features: its learned rows train on one device for now (drop the launcher)", ds.Name, ds.Types[featureless].Name)
	case featureless >= 0 && j.Devices > 1:
		return fmt.Errorf("devices: %s is typed, and its type %s has no features: its learned rows train on one device for now (drop --devices)", ds.Name, ds.Types[featureless].Name)
	}
	return nil
}
