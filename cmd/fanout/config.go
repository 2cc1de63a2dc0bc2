package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/internal/quote"
	"github.com/fanout-gnn/fanout/train"
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
		{"model", "model: sage, gcn, gin or gat", func(c *train.Config, _ *runFlags) any { return &c.Model }},
		{"gin-eps", "GIN's ε: 0 (fixed) or learn", func(c *train.Config, _ *runFlags) any { return &c.GINEps }},
		{"heads", "GAT's attention heads per hidden layer, concatenated (hidden = heads × width per head)", func(c *train.Config, _ *runFlags) any { return &c.Heads }},
		{"out-heads", "GAT's attention heads of the last layer, averaged (0: as --heads)", func(c *train.Config, _ *runFlags) any { return &c.OutHeads }},
		{"attn-dropout", "GAT's dropout `probability` on the attention coefficients", func(c *train.Config, _ *runFlags) any { return &c.AttnDropout }},
		{"activations", "how hidden layers' outputs are held: float32, or bfloat16 where the next layer reads them so (GraphSAGE; half the bytes written and aggregated); default float32 (bfloat16 measured on products-sim: 0.5% faster per step, 0.1 points less accurate, 31 MiB more memory; docs/perf.md)", func(c *train.Config, _ *runFlags) any { return &c.Activations }},
		{"bottom-products", "how the bottom GraphSAGE layer multiplies: float32, or bfloat16 operands with float32 sums (mixed precision; float32 weights and Adam)", func(c *train.Config, _ *runFlags) any { return &c.BottomProducts }},
		{"layers", "number of GNN layers", func(c *train.Config, _ *runFlags) any { return &c.Layers }},
		{"hidden", "hidden width", func(c *train.Config, _ *runFlags) any { return &c.Hidden }},
		{"fanouts", "`list` of neighbours per hop from the seeds, comma-separated (-1 = all, 0 = none)", func(c *train.Config, _ *runFlags) any { return &c.Fanouts }},
		{"batch", "seed vertices per step, of each device with several devices or processes (the global batch is then N times larger, as in PyTorch DDP, DGL and PyG); a batch larger than the training split takes the whole split, one batch an epoch", func(c *train.Config, _ *runFlags) any { return &c.Batch }},
		{"epochs", "training epochs", func(c *train.Config, _ *runFlags) any { return &c.Epochs }},
		{"lr", "Adam learning `rate`", func(c *train.Config, _ *runFlags) any { return &c.LR }},
		{"weight-decay", "L2 weight `decay`", func(c *train.Config, _ *runFlags) any { return &c.WeightDecay }},
		{"dropout", "dropout `probability` on hidden layers", func(c *train.Config, _ *runFlags) any { return &c.Dropout }},
		{"input-dropout", "dropout `probability` on the input features", func(c *train.Config, _ *runFlags) any { return &c.InDropout }},
		{"seed", "random seed (initialisation, shuffling, sampling, dropout)", func(c *train.Config, _ *runFlags) any { return &c.Seed }},
		{"eval-every", "validate every N epochs", func(c *train.Config, _ *runFlags) any { return &c.EvalEvery }},
		{"patience", "stop after N validations without improvement (0 = never)", func(c *train.Config, _ *runFlags) any { return &c.Patience }},
		{"full-eval", "evaluate with all neighbours instead of the training fanouts", func(c *train.Config, _ *runFlags) any { return &c.FullEval }},
	}
}

// runOptions are the settings train and bench share that are not
// hyper-parameters: the data, the device, threads, the replay envelope's
// margin and the GPU options.
func runOptions() []option {
	opts := []option{
		{"data", "dataset directory (default: generate --preset in memory)", func(_ *train.Config, rf *runFlags) any { return &rf.src.data }},
		{"preset", "built-in preset to generate in memory when --data is not given: " + presetNames(), func(_ *train.Config, rf *runFlags) any { return &rf.src.preset }},
		{"feat-dim", "with --preset: the generated features' width instead of the preset's (e.g. papers-sim at 1280 is 86 GB of features)", func(_ *train.Config, rf *runFlags) any { return &rf.src.featDim }},
		{"device", "auto, cpu, cuda or cuda:N", func(_ *train.Config, rf *runFlags) any { return &rf.device }},
		{"threads", "CPU worker threads (0 = all cores)", func(_ *train.Config, rf *runFlags) any { return &rf.threads }},
		{"feature-dtype", "how the features are held on the device: float32, or bfloat16 (half the bytes gathered and sent over PCIe; float32 values rounded to bfloat16); default: bfloat16 when training on one GPU (as accurate as float32 on every accuracy test we have, docs/perf.md), otherwise as the dataset stores them (float32 for a preset); float32 over a bfloat16 dataset widens them", func(_ *train.Config, rf *runFlags) any { return &rf.featureDType }},
		{"replicate", "with --devices N > 1: the graph is partitioned over the devices, which read each other's lists in place; every device also keeps copies of the highest-degree vertices' lists: a fraction of all list bytes (0.1), a size (512MiB), 0, or all (the whole graph on every device, no partition); default 0.1", func(_ *train.Config, rf *runFlags) any { return &rf.replicate }},
		{"no-feature-reuse", "with sharded features: read every row from its peer at every batch, instead of keeping the rows of one batch that the next needs again", func(_ *train.Config, rf *runFlags) any { return &rf.noFeatureReuse }},
		{"shard-features", "with --devices N > 1: auto (the feature rows sharded over the devices as the graph, each device reading its peers' rows in place, only when the table does not fit a device with room for the step; on CPU devices the whole table on each), on (always sharded; float32 features, not with hybrid or --full-eval), off (the whole table on every device) or hosts (spread over the ranks of a job in hosts, the vertices partitioned over the hosts and dealt to a host's ranks, every other row fetched with all-to-alls: NCCL between GPUs, MPI between CPU processes; the --replicate budget's vertices' rows on every rank)", func(_ *train.Config, rf *runFlags) any { return &rf.shardFeatures }},
		{"ranks-per-host", "with --shard-features hosts: how many ranks make a host (0: the launcher's LOCAL_WORLD_SIZE for processes; all devices of one process); several in-process devices can stand for several hosts", func(_ *train.Config, rf *runFlags) any { return &rf.ranksPerHost }},
		{"envelope-margin", "replay: capacities = largest observed batch sizes x this margin", func(_ *train.Config, rf *runFlags) any { return &rf.margin }},
		{"overlap-sampling", "replay: sample the next step beside this step's work (a second GPU stream); false samples it after, in order (the same results)", func(_ *train.Config, rf *runFlags) any { return &rf.overlap }},
	}
	for _, o := range cudaOptions() {
		opts = append(opts, option{o.name, o.usage, func(_ *train.Config, rf *runFlags) any { return o.field(&rf.cuda) }})
	}
	return opts
}

// trainOptions are the settings only train has.
func trainOptions() []option {
	return []option{
		{"out", "run directory for checkpoints, metrics.jsonl and summary.json (default: none)", func(_ *train.Config, rf *runFlags) any { return &rf.out }},
		{"global-batch", "with several devices or processes: the seed vertices of one step over the whole group, split evenly over the devices (instead of --batch per device)", func(_ *train.Config, rf *runFlags) any { return &rf.globalBatch }},
		{"devices", "train data-parallel on N devices of one host, or all (CPU devices in one process, one per two cores for all; or GPUs 0..N-1 joined by NCCL); --batch seeds per device (--global-batch splits one batch over them); default: one device, no group", func(_ *train.Config, rf *runFlags) any { return &rf.devicesSpec }},
		{"mode", "driver: eager (host-driven), replay (whole step captured once and replayed), hybrid (replay with the features in a GPU cache and host memory, for data larger than the GPU) or auto (replay on a GPU, hybrid when the data does not fit it, eager on the CPU)", func(_ *train.Config, rf *runFlags) any { return &rf.mode }},
		{"gpu-memory", "hybrid: GPU memory the run may use, e.g. 20GiB, 512MiB or bytes (default: what the GPU has free)", func(_ *train.Config, rf *runFlags) any { return &rf.gpuMemory }},
		{"cache-rows", "hybrid: feature rows in the GPU cache (-1: as many as the budget leaves; 0: every row read from host memory)", func(_ *train.Config, rf *runFlags) any { return &rf.cacheRows }},
		{"hot-ratio", "hybrid: fraction of the vertices whose bottom-layer rows the CPU computes (the hottest bottom-layer destinations of a pre-sampling pass); the GPU skips their neighbourhoods; 0: none; auto: the fastest of 0, 0.02, 0.05 and 0.1 in a few timed super-batches each", func(_ *train.Config, rf *runFlags) any { return &rf.hotSpec }},
		{"staleness", "hybrid: the CPU works K super-batches ahead of the GPU (0: the GPU waits for each super-batch's rows); with --hot-rows outputs, super-batch g's rows use the weights from the start of super-batch g-K", func(_ *train.Config, rf *runFlags) any { return &rf.staleness }},
		{"super-batch", "hybrid: training steps that share one set of hot rows", func(_ *train.Config, rf *runFlags) any { return &rf.superBatch }},
		{"hot-rows", "hybrid: what the CPU computes for hot vertices: inputs (their aggregated neighbour features, which the GPU multiplies by the weights of the moment: nothing stale, exact gradients; GAT falls back to outputs) or outputs (layer 0's output, with the weights of --staleness super-batches before)", func(_ *train.Config, rf *runFlags) any { return &rf.hotRows }},
	}
}

// commandLineOnly are train's flags that a config file cannot set: what to
// read, and what to do with an existing run.
var commandLineOnly = []string{"config", "resume", "force"}

// register adds a flag for the setting *p under name, with *p as its
// default. Standard kinds use the standard flags (so -h names their types).
func register(fs *flag.FlagSet, name, usage string, p any) {
	switch p := p.(type) {
	case *string:
		fs.StringVar(p, name, *p, usage)
	case *int:
		fs.IntVar(p, name, *p, usage)
	case *uint64:
		fs.Uint64Var(p, name, *p, usage)
	case *float64:
		fs.Float64Var(p, name, *p, usage)
	case *bool:
		fs.BoolVar(p, name, *p, usage)
	default:
		fs.Var(value{p}, name, usage)
	}
}

// value is a flag over a float32 or []int setting.
type value struct{ p any }

func (v value) String() string {
	switch p := v.p.(type) {
	case *float32:
		return strconv.FormatFloat(float64(*p), 'g', -1, 32)
	case *[]int:
		return train.FormatFanouts(*p)
	}
	return ""
}

func (v value) Set(s string) error { return parseInto(v.p, s) }

// shown is a value as an error message shows it: as given, or quoted when
// it holds anything that would break the message's one line; at most
// quoteLimit bytes of it either way.
func shown(s string) string {
	if s == "" || len(s) > quoteLimit || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return quoted(s)
	}
	return s
}

// quoteLimit is how much of an input an error message quotes.
const quoteLimit = quote.Limit

// quoted is s as an error message quotes what it rejects: Go-quoted, and
// at most quoteLimit bytes of it, with the length of the whole after.
func quoted(s string) string { return quote.Quote(s) }

// parseInto parses s into the setting *p: the same rules for a flag and a
// config file's scalar.
func parseInto(p any, s string) error {
	switch p := p.(type) {
	case *string:
		*p = s
	case *int:
		v, err := strconv.ParseInt(s, 0, strconv.IntSize)
		if err != nil {
			return fmt.Errorf("%s is not an integer", shown(s))
		}
		*p = int(v)
	case *uint64:
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			return fmt.Errorf("%s is not a non-negative integer", shown(s))
		}
		*p = v
	case *float32:
		v, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return fmt.Errorf("%s is not a number", shown(s))
		}
		*p = float32(v)
	case *float64:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%s is not a number", shown(s))
		}
		*p = v
	case *bool:
		v, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%s is not true or false", s)
		}
		*p = v
	case *[]int:
		v, err := parseFanouts(s)
		if err != nil {
			return err
		}
		*p = v
	default:
		return fmt.Errorf("setting of type %T", p)
	}
	return nil
}

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
		register(fs, o.name, o.usage, o.field(&h.cli, nil))
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

// parseFanouts reads "15,10,5".
func parseFanouts(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("%s is not a list of integers like 15,10,5", quoted(s))
		}
		out = append(out, v)
	}
	return out, nil
}

// presetConfig is the training configuration a preset defines.
func presetConfig(p rmat.Preset) train.Config {
	c := train.Defaults()
	c.Layers, c.Hidden, c.Batch = p.Layers, p.Hidden, p.Batch
	c.Fanouts = append([]int(nil), p.Fanouts...)
	c.Dropout, c.LR = p.Dropout, p.LR
	return c
}

// fileConfig is a parsed --config file: the YAML value of each key.
type fileConfig struct {
	path string
	keys map[string]*yaml.Node
}

// fileOptions are the settings a config file may hold.
func fileOptions() []option {
	return append(append(hyperOptions(), runOptions()...), trainOptions()...)
}

// loadConfig reads a YAML config file: a mapping whose keys are the flag
// names of fanout train. Unknown keys, keys given twice and keys only the
// command line may give are errors naming the file, the line and the key.
func loadConfig(path string) (*fileConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseConfig(path, b)
}

// parseConfig parses the text b of the config file at path.
func parseConfig(path string, b []byte) (*fileConfig, error) {
	fc := &fileConfig{path: path, keys: map[string]*yaml.Node{}}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return fc, nil // an empty file sets nothing
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return fc, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: line %d: want a mapping of keys to values (hidden: 64)", path, root.Line)
	}
	known := map[string]bool{}
	for _, o := range fileOptions() {
		known[o.name] = true
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		at := fmt.Sprintf("%s: line %d", path, k.Line)
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s: a key must be a name", at)
		}
		name := k.Value
		switch {
		case known[name]:
		case contains(commandLineOnly, name):
			return nil, fmt.Errorf("%s: %s is not a config key; give --%s on the command line", at, quoted(name), name)
		case known[strings.ReplaceAll(name, "_", "-")]:
			return nil, fmt.Errorf("%s: unknown key %s; it is spelled %s, like the flag", at, quoted(name), quoted(strings.ReplaceAll(name, "_", "-")))
		default:
			return nil, fmt.Errorf("%s: unknown key %s (config keys are the flag names of fanout train -h)", at, quoted(name))
		}
		if fc.keys[name] != nil {
			return nil, fmt.Errorf("%s: key %s given twice", at, quoted(name))
		}
		fc.keys[name] = v
	}
	return fc, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// has reports whether the file sets the key name.
func (fc *fileConfig) has(name string) bool { return fc != nil && fc.keys[name] != nil }

// apply sets, for each option the file holds and skip does not name, the
// setting field(c, rf). Errors name the file, line and key.
func (fc *fileConfig) apply(opts []option, c *train.Config, rf *runFlags, skip map[string]bool) error {
	if fc == nil {
		return nil
	}
	for _, o := range opts {
		n := fc.keys[o.name]
		if n == nil || skip[o.name] {
			continue
		}
		if err := decodeSetting(o.field(c, rf), n); err != nil {
			return fmt.Errorf("%s: line %d: %s: %w", fc.path, n.Line, o.name, err)
		}
	}
	return nil
}

// decodeSetting parses a YAML value into the setting *p. An integer setting
// takes only an integer (16.9 is an error, not 16); a number takes an
// integer or a float; fanouts take a list of integers or "15,10,5".
func decodeSetting(p any, n *yaml.Node) error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if fan, ok := p.(*[]int); ok && n.Kind == yaml.SequenceNode {
		var out []int
		for _, e := range n.Content {
			var v int
			if e.Kind != yaml.ScalarNode || e.Tag != "!!int" || parseInto(&v, e.Value) != nil {
				return fmt.Errorf("%s is not an integer", describe(e))
			}
			out = append(out, v)
		}
		*fan = out
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("want a single value, not %s", describe(n))
	}
	if n.Tag == "!!null" {
		return errors.New("no value")
	}
	want := ""
	switch p.(type) {
	case *int, *uint64:
		if n.Tag != "!!int" {
			want = "an integer"
		}
	case *float32, *float64:
		if n.Tag != "!!int" && n.Tag != "!!float" {
			want = "a number"
		}
	case *bool:
		if n.Tag != "!!bool" {
			want = "true or false"
		}
	}
	if want != "" {
		return fmt.Errorf("%s is not %s", shown(n.Value), want)
	}
	return parseInto(p, n.Value)
}

// describe names a YAML value for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return shown(n.Value)
}
