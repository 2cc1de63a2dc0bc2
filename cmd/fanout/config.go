package main

import (
	"errors"
	"flag"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/fanout-gnn/fanout/internal/quote"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/job"
)

// option is one setting of train and bench: a flag and, in a --config file,
// the key of the same name. The tables below are the only list of settings,
// so flags and config keys cannot drift apart; a new setting is one row.
type option struct {
	name, usage string
	// field points at the setting in a training configuration (hyper-
	// parameters) or in the run flags (everything else); it is handed
	// whichever of the two the table holds and may get nil for the other.
	field func(c *train.Config, rf *runFlags) any
}

// hyperOptions are the training hyper-parameters (train.Config).
func hyperOptions() []option {
	return []option{
		{"model", "model: sage, gcn, gin or gat; for typed graphs rsage (GraphSAGE per relation, summed: PyTorch Geometric's to_hetero), rgcn (a weight per relation, a root weight per type) or rgat (a GAT per relation without self loops, summed: MLPerf's RGAT)", func(c *train.Config, _ *runFlags) any { return &c.Model }},
		{"bases", "rgcn: relation weights as combinations of N shared bases (basis decomposition; 0: a weight per relation)", func(c *train.Config, _ *runFlags) any { return &c.Bases }},
		{"embed-featureless", "typed graphs: the width of the rows learned for vertex types without features (an embedding table per type, trained on the rows each step reads); 0: the target type's feature width", func(c *train.Config, _ *runFlags) any { return &c.EmbedFeatureless }},
		{"relation-fanouts", "typed graphs: one relation's own fanouts per hop, RELATION=LIST (its name or src:name:dst), once per relation; the others take --fanouts", func(c *train.Config, _ *runFlags) any { return &c.RelationFanouts }},
		{"gin-eps", "GIN's ε: 0 (fixed) or learn", func(c *train.Config, _ *runFlags) any { return &c.GINEps }},
		{"heads", "GAT's and RGAT's attention heads per hidden layer, concatenated (hidden = heads × width per head)", func(c *train.Config, _ *runFlags) any { return &c.Heads }},
		{"out-heads", "GAT's and RGAT's attention heads of the last layer, averaged (0: as --heads)", func(c *train.Config, _ *runFlags) any { return &c.OutHeads }},
		{"attn-dropout", "GAT's and RGAT's dropout `probability` on the attention coefficients", func(c *train.Config, _ *runFlags) any { return &c.AttnDropout }},
		{"gat-project-first", "GAT: the bottom layer projects every source before it aggregates (PyG's GATConv order) where it would otherwise aggregate its input rows per head first (the default where the input is narrower than --hidden: fewer bytes per edge and fewer products; the same parameters and results to float32 rounding)", func(c *train.Config, _ *runFlags) any { return &c.GATProjectFirst }},
		{"activations", "how hidden layers' outputs are held: float32, or bfloat16 where the next layer reads them so (GraphSAGE; half the bytes written and aggregated); default float32 (bfloat16 measured on products-sim: 0.5% faster per step, 0.1 points less accurate, 31 MiB more memory; docs/perf.md)", func(c *train.Config, _ *runFlags) any { return &c.Activations }},
		{"bottom-products", "how the bottom GraphSAGE or GAT layer multiplies: float32, or bfloat16 operands with float32 sums (mixed precision; float32 weights and Adam; GAT's where it aggregates first)", func(c *train.Config, _ *runFlags) any { return &c.BottomProducts }},
		{"norm", "normalisation after each hidden layer: none, batch (batch normalisation: per column over the batch, running statistics for evaluation; stops GIN's sums at high-degree vertices from diverging) or layer (per vertex)", func(c *train.Config, _ *runFlags) any { return &c.Norm }},
		{"sync-norm", "with --norm batch on several devices or processes: normalise by the batch statistics of the whole group (all-reduced inside the step) instead of each device's own (the default, as PyTorch DDP)", func(c *train.Config, _ *runFlags) any { return &c.SyncNorm }},
		{"jk", "jumping knowledge, as PyTorch Geometric's BasicGNN: none, or last, cat or max (every layer hidden; a linear head over the last layer's output, every layer's output concatenated, or their element-wise maximum)", func(c *train.Config, _ *runFlags) any { return &c.JK }},
		{"layers", "number of GNN layers", func(c *train.Config, _ *runFlags) any { return &c.Layers }},
		{"hidden", "hidden width", func(c *train.Config, _ *runFlags) any { return &c.Hidden }},
		{"fanouts", "`list` of neighbours per hop from the seeds, comma-separated (-1 = all, 0 = none)", func(c *train.Config, _ *runFlags) any { return &c.Fanouts }},
		{"batch", "seed vertices per step, of each device with several devices or processes (the global batch is then N times larger, as in PyTorch DDP, DGL and PyG); a batch larger than the training split takes the whole split, one batch an epoch", func(c *train.Config, _ *runFlags) any { return &c.Batch }},
		{"epochs", "training epochs", func(c *train.Config, _ *runFlags) any { return &c.Epochs }},
		{"lr", "Adam learning `rate`", func(c *train.Config, _ *runFlags) any { return &c.LR }},
		{"weight-decay", "L2 weight `decay`", func(c *train.Config, _ *runFlags) any { return &c.WeightDecay }},
		{"lr-schedule", "the learning rate over the epochs: constant, or cosine (epoch e of n at lr × (1 + cos(π·e/n))/2: the first at --lr, the last near 0; a run that still moves after its first epochs settles); default constant, and cosine for --task link (with --model gcn: docs/perf.md)", func(c *train.Config, _ *runFlags) any { return &c.LRSchedule }},
		{"dropout", "dropout `probability` on hidden layers", func(c *train.Config, _ *runFlags) any { return &c.Dropout }},
		{"input-dropout", "dropout `probability` on the input features", func(c *train.Config, _ *runFlags) any { return &c.InDropout }},
		{"seed", "random seed (initialisation, shuffling, sampling, dropout)", func(c *train.Config, _ *runFlags) any { return &c.Seed }},
		{"eval-every", "validate every N epochs", func(c *train.Config, _ *runFlags) any { return &c.EvalEvery }},
		{"eval-every-steps", "also validate after every N training steps within an epoch (its end validates as --eval-every says); each validation is a line of metrics.jsonl, the progress output and TensorBoard with the epoch, the step, the global step and the elapsed time, and the best model and --patience count it; default: at epochs' ends only", func(c *train.Config, _ *runFlags) any { return &c.EvalEverySteps }},
		{"eval-every-epochs", "also validate every `fraction` of an epoch within it (0 < fraction <= 1): every ⌊fraction × the epoch's steps⌋ steps, at least 1, as MLPerf's GNN benchmark validates every 0.05 epoch; instead of --eval-every-steps", func(c *train.Config, _ *runFlags) any { return &c.EvalEveryEpochs }},
		{"target-acc", "stop at the first validation whose primary figure reaches `A` (0 < A <= 1): the figure that picks the best model, node classification's accuracy, link prediction's ROC-AUC; the summary reports the time to it, counted as MLPerf does from the start of training (after loading the data and setting up the model) to the end of that validation, evaluations and checkpoints included, or that it was not reached (the run still ends well)", func(c *train.Config, _ *runFlags) any { return &c.TargetAcc }},
		{"patience", "stop after N validations without improvement (0 = never)", func(c *train.Config, _ *runFlags) any { return &c.Patience }},
		{"full-eval", "evaluate with all neighbours instead of the training fanouts", func(c *train.Config, _ *runFlags) any { return &c.FullEval }},
		{"task", "what to train: node (vertex classification) or link (link prediction over the dataset's link task: import or gen --link-split; a preset in memory is split 0.85,0.05,0.1), in every mode and on every placement of devices but a partitioned graph or sharded features", func(c *train.Config, _ *runFlags) any { return &c.Task }},
		{"negatives", "task link: negatives drawn per positive edge at every step", func(c *train.Config, _ *runFlags) any { return &c.Link.Negatives }},
		{"negative-dist", "task link: where negatives' destinations come from: uniform or degree (drawn uniformly, or in proportion to the vertices' degrees), or in-batch (the next --negatives positives' destinations of the step, at most --batch - 1)", func(c *train.Config, _ *runFlags) any { return &c.Link.NegativeDist }},
		{"negative-sharing", "task link: none (each positive edge draws --negatives of its own) or batch (a step draws --negatives distinct vertices once, and every positive of the step is scored against all of them)", func(c *train.Config, _ *runFlags) any { return &c.Link.NegativeSharing }},
		{"decoder", "task link: how a pair is scored: dot (the embeddings' dot product) or mlp (an MLP over their element-wise product)", func(c *train.Config, _ *runFlags) any { return &c.Link.Decoder }},
		{"exclude", "task link: which of a step's positive edges leave its sampled neighbourhoods: reverse (each edge and its reverse), self (each edge) or none", func(c *train.Config, _ *runFlags) any { return &c.Link.Exclude }},
		{"embed", "task link: the embedding width, the model's output (0: --hidden)", func(c *train.Config, _ *runFlags) any { return &c.Link.Embed }},
		{"eval-negatives", "task link: rank every validation and test edge (u, v) against N negatives (u, w), w drawn uniformly at evaluation, as ogbl-citation2's 1000 (MRR); 0: against the dataset's stored negatives", func(c *train.Config, _ *runFlags) any { return &c.Link.EvalNegatives }},
		{"eval-edges", "task link: evaluate only the first N edges of the validation and of the test set (a uniform sample: the split shuffled them); 0: all", func(c *train.Config, _ *runFlags) any { return &c.Link.EvalEdges }},
		{"epoch-steps", "end every epoch (and evaluate) after N steps, each epoch still a fresh shuffle of all training items; 0: a whole pass", func(c *train.Config, _ *runFlags) any { return &c.EpochSteps }},
	}
}

// runOptions are the settings train and bench share that are not
// hyper-parameters: the data, the device, threads, the replay envelope's
// margin and the GPU options.
func runOptions() []option {
	opts := []option{
		{"data", "dataset directory (default: generate --preset in memory)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Source.Data }},
		{"preset", "built-in preset to generate in memory when --data is not given: " + presetNames(), func(_ *train.Config, rf *runFlags) any { return &rf.j.Source.Preset }},
		{"labels", "with --preset tiny, products-sim or papers-sim: how vertices are labelled: neighbours (their neighbours' most common type, the default) or community (planted communities the edges respect, with a weaker signal in the features)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Source.Labels }},
		{"feat-dim", "with --preset: the generated features' width instead of the preset's (e.g. papers-sim at 1280 is 86 GB of features)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Source.FeatDim }},
		{"device", "auto, cpu, cuda or cuda:N", func(_ *train.Config, rf *runFlags) any { return &rf.j.Device }},
		{"threads", "CPU worker threads (0 = all cores)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Threads }},
		{"feature-dtype", "how the features are held on the device: float32, or bfloat16 (half the bytes gathered and sent over PCIe; float32 values rounded to bfloat16); default: bfloat16 when training on one GPU (as accurate as float32 on every accuracy test we have, docs/perf.md), otherwise as the dataset stores them (float32 for a preset); float32 over a bfloat16 dataset widens them", func(_ *train.Config, rf *runFlags) any { return &rf.j.FeatureDType }},
		{"replicate", "with --devices N > 1: how the graph is held. Partitioned over the devices, which read each other's lists in place, every device also keeping copies of the highest-degree vertices' lists: a fraction of all list bytes (0.1), a size (512MiB) or 0; all: the whole graph on every device, no partition; auto: the whole graph on every GPU where the dataset fits each with room for the step (faster where it fits), otherwise, and in the hybrid mode or with --shard-features on or hosts, partitioned with 0.1 (default auto)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Placement.Replicate }},
		{"no-feature-reuse", "with sharded features: read every row from its peer at every batch, instead of keeping the rows of one batch that the next needs again", func(_ *train.Config, rf *runFlags) any { return &rf.j.Placement.NoFeatureReuse }},
		{"shard-features", "with --devices N > 1: auto (the feature rows sharded over the devices as the graph, each device reading its peers' rows in place, only when the table does not fit a device with room for the step; on CPU devices the whole table on each), on (always sharded; float32 features, not with hybrid or --full-eval), off (the whole table on every device) or hosts (spread over the ranks of a job in hosts, the vertices partitioned over the hosts and dealt to a host's ranks, every other row fetched with all-to-alls: NCCL between GPUs, MPI between CPU processes; the --replicate budget's vertices' rows on every rank)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Placement.ShardFeatures }},
		{"ranks-per-host", "with --shard-features hosts: how many ranks make a host (0: the launcher's LOCAL_WORLD_SIZE for processes; all devices of one process); several in-process devices can stand for several hosts", func(_ *train.Config, rf *runFlags) any { return &rf.j.Placement.RanksPerHost }},
		{"envelope-margin", "replay: capacities = largest observed batch sizes x this margin", func(_ *train.Config, rf *runFlags) any { return &rf.j.Replay.Margin }},
		{"overlap-sampling", "replay: sample the next step beside this step's work (a second GPU stream); false samples it after, in order (the same results)", func(_ *train.Config, rf *runFlags) any { return &rf.overlap }},
	}
	for _, o := range cudaOptions() {
		opts = append(opts, option{o.name, o.usage, func(_ *train.Config, rf *runFlags) any { return o.field(&rf.j.CUDA) }})
	}
	return opts
}

// trainOptions are the settings only train has.
func trainOptions() []option {
	return []option{
		{"out", "run directory for checkpoints, metrics.jsonl and summary.json (default: none)", func(_ *train.Config, rf *runFlags) any { return &rf.out }},
		{"tensorboard", "directory for TensorBoard event files: per epoch the loss, accuracies, epoch time and steps/s; the training loss every 64 steps (default: none)", func(_ *train.Config, rf *runFlags) any { return &rf.tensorboard }},
		{"global-batch", "with several devices or processes: the seed vertices of one step over the whole group, split evenly over the devices (instead of --batch per device)", func(_ *train.Config, rf *runFlags) any { return &rf.j.GlobalBatch }},
		{"devices", "train data-parallel on N devices of one host, or all (CPU devices in one process, one per two cores for all; or GPUs 0..N-1 joined by NCCL); --batch seeds per device (--global-batch splits one batch over them); default: one device, no group", func(_ *train.Config, rf *runFlags) any { return &rf.devicesSpec }},
		{"mode", "driver: eager (host-driven), replay (whole step captured once and replayed), hybrid (replay with the features in a GPU cache and host memory, for data larger than the GPU) or auto (replay on a GPU, hybrid when the data does not fit it, eager on the CPU)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Mode }},
		{"gpu-memory", "hybrid: GPU memory the run may use, e.g. 20GiB, 512MiB or bytes (default: what the GPU has free)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Hybrid.GPUMemory }},
		{"cache-rows", "hybrid: feature rows in the GPU cache (-1: as many as the budget leaves; 0: every row read from host memory)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Hybrid.CacheRows }},
		{"host-memory", "hybrid: host memory the features' host tier may hold, e.g. 32GiB; features larger than it stay in the dataset's feat.npy (--data), the rows ranked after the GPU cache's that fit in host memory, the rest read from the file when a step needs them (default: the whole table in host memory)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Hybrid.HostMemory }},
		{"disk-buffered", "hybrid: read the feature rows left on disk (--host-memory) through the page cache instead of with O_DIRECT (which falls back to it by itself, saying so, where the file system refuses O_DIRECT)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Hybrid.DiskBuffered }},
		{"stage-host-rows", "hybrid, with features on disk (--host-memory): the CPU also copies the host tier's rows a step needs into the pinned staging beside the rows read from disk, so the GPU reads every row outside its cache from one contiguous area instead of random host rows over PCIe (the staging then holds a step's rows outside the cache, within --host-memory)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Hybrid.StageHost }},
		{"host-band", "hybrid on a GPU, one vertex type, features in host memory: host memory for a copy of the rows ranked after the GPU cache's, in rank order, e.g. 1GiB; 0: none. The GPU reads random rows within a few hundred MiB about four times as fast as rows spread over a large table; with --stage-host-rows, the first this many bytes of the disk tier's host tier (in rank order already) are read in place and only the rest staged (default: 1GiB; with --stage-host-rows 512MiB)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Hybrid.HostBand }},
		{"fetch-ahead", "hybrid: gather each step's rows from host memory (and, with --host-memory, from disk) a step ahead, beside the step before, instead of inside the step (for a small cache, whose misses cross PCIe every step)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Hybrid.FetchAhead }},
		{"lookahead", "hybrid, with features on disk (--host-memory): start each training step's gather N steps ahead (2 or more; implies --fetch-ahead), so the CPU copies a step's rows (with --stage-host-rows, the host tier's too) during the N-1 steps before it instead of within one; each step ahead takes a staging of its own within --host-memory (default 1: --fetch-ahead's one step at most)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Hybrid.Lookahead }},
		{"hot-ratio", "hybrid: fraction of the vertices whose bottom-layer rows the CPU computes (the likeliest bottom-layer destinations of a training batch, computed over the graph); the GPU skips their neighbourhoods; 0: none; auto: the fastest of 0, 0.02, 0.05 and 0.1 in a few timed super-batches each", func(_ *train.Config, rf *runFlags) any { return &rf.j.Hybrid.HotSpec }},
		{"staleness", "hybrid: the CPU works K super-batches ahead of the GPU (0: the GPU waits for each super-batch's rows); with --hot-rows outputs, super-batch g's rows use the weights from the start of super-batch g-K", func(_ *train.Config, rf *runFlags) any { return &rf.j.Hybrid.Staleness }},
		{"super-batch", "hybrid: training steps that share one set of hot rows", func(_ *train.Config, rf *runFlags) any { return &rf.j.Hybrid.SuperBatch }},
		{"embeddings", "a .npy `file` that gets every vertex's embedding from the best model: a link predictor's output (float32 [vertices, embed]), a node classifier's last hidden layer (float32 [vertices, hidden]; layer-wise full-neighbour inference); an existing file is kept unless --force", func(_ *train.Config, rf *runFlags) any { return &rf.j.Outputs.Embeddings }},
		{"scores", "task link: a .npy `file` of vertex pairs (int32 or int64 [pairs, 2]) that the best model scores into scores.npy in --out (float32 [pairs]); --out also gets encoder.safetensors (PyG's names) and, for the mlp decoder, decoder.safetensors (torch.nn.Sequential's state dict)", func(_ *train.Config, rf *runFlags) any { return &rf.j.Outputs.Scores }},
		{"hot-rows", "hybrid: what the CPU computes for hot vertices: inputs (their aggregated neighbour features, which the GPU multiplies by the weights of the moment: nothing stale, exact gradients; GAT falls back to outputs) or outputs (layer 0's output, with the weights of --staleness super-batches before)", func(_ *train.Config, rf *runFlags) any { return &rf.hotRows }},
	}
}

// registerNamed registers the options of opts named in names (each must
// be there) on c or rf: a command that takes only some of the settings
// (eval) declares them from the same table as train.
func registerNamed(fs *flag.FlagSet, opts []option, c *train.Config, rf *runFlags, names ...string) {
	for _, o := range opts {
		if slices.Contains(names, o.name) {
			job.Register(fs, o.name, o.usage, o.field(c, rf))
		}
	}
}

// commandLineOnly are train's flags that a config file cannot set: what to
// read, and what to do with an existing run.
var commandLineOnly = []string{"config", "resume", "force"}

// quoted is s as an error message quotes what it rejects: Go-quoted, and
// at most quote.Limit bytes of it, with the length of the whole after.
func quoted(s string) string { return quote.Quote(s) }

// hyperFlags holds the hyper-parameters given on the command line. Only
// flags the user sets are applied (apply), over the preset's or the config
// file's values.
type hyperFlags struct {
	fs  *flag.FlagSet
	cli train.Config
}

func addHyperFlags(fs *flag.FlagSet) *hyperFlags {
	h := &hyperFlags{fs: fs, cli: train.Defaults()}
	for _, o := range hyperOptions() {
		job.Register(fs, o.name, o.usage, o.field(&h.cli, nil))
	}
	return h
}

// apply copies the hyper-parameters set on the command line into cfg.
func (h *hyperFlags) apply(cfg *train.Config) {
	set := setFlags(h.fs)
	for _, o := range hyperOptions() {
		if set[o.name] {
			reflect.ValueOf(o.field(cfg, nil)).Elem().Set(reflect.ValueOf(o.field(&h.cli, nil)).Elem())
		}
	}
}

// setFlags is the set of flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// fileConfig is a parsed --config file (nil: none).
type fileConfig struct{ *job.ConfigFile }

// fileOptions are the settings a config file may hold.
func fileOptions() []option {
	return append(append(hyperOptions(), runOptions()...), trainOptions()...)
}

// fileKeys are the keys a config file may hold: the flag names of train.
func fileKeys() []string {
	var keys []string
	for _, o := range fileOptions() {
		keys = append(keys, o.name)
	}
	return keys
}

// loadConfig reads a YAML config file whose keys are the flag names of
// fanout train (job.ReadConfigFile).
func loadConfig(path string) (*fileConfig, error) {
	fc, err := job.ReadConfigFile(path, fileKeys(), commandLineOnly)
	return &fileConfig{fc}, err
}

// parseConfig parses the text b of the config file at path.
func parseConfig(path string, b []byte) (*fileConfig, error) {
	fc, err := job.ParseConfigFile(path, b, fileKeys(), commandLineOnly)
	return &fileConfig{fc}, err
}

// has reports whether the file sets the key name.
func (fc *fileConfig) has(name string) bool { return fc != nil && fc.Has(name) }

// apply sets, for each option the file holds and skip does not name, the
// setting field(c, rf).
func (fc *fileConfig) apply(opts []option, c *train.Config, rf *runFlags, skip map[string]bool) error {
	if fc == nil {
		return nil
	}
	for _, o := range opts {
		if skip[o.name] {
			continue
		}
		if err := fc.Decode(o.name, o.field(c, rf)); err != nil {
			return err
		}
	}
	return nil
}

// settingError renames a setting's key in a configuration error
// (train.SettingError: the JSON name) to its flag, which is also the config
// file's key: "weight_decay: ..." becomes "weight-decay: ...".
func settingError(err error) error {
	var se *train.SettingError
	if !errors.As(err, &se) {
		return err
	}
	if name, ok := keyFlags()[se.Key]; ok {
		return fmt.Errorf("%s: %s", name, se.Problem)
	}
	return err
}

// keyFlags maps each hyper-parameter's key in train.Config (its JSON name,
// a nested field's as "link.negatives") to its flag, by where the option
// table's field points.
func keyFlags() map[string]string {
	var c train.Config
	keys := map[uintptr]string{}
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Type.Kind() == reflect.Struct {
				walk(v.Field(i), prefix+name+".")
				continue
			}
			keys[v.Field(i).Addr().Pointer()] = prefix + name
		}
	}
	walk(reflect.ValueOf(&c).Elem(), "")
	out := map[string]string{}
	for _, o := range hyperOptions() {
		if k, ok := keys[reflect.ValueOf(o.field(&c, nil)).Pointer()]; ok {
			out[k] = o.name
		}
	}
	return out
}
