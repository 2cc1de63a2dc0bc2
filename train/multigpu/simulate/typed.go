package simulate

import (
	"fmt"
	"runtime"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/rng"
	"github.com/fanout-gnn/fanout/train"
)

// A typed graph trains data-parallel with every relation and every
// feature table on every device (train's typed step, train/job's
// runTyped): nothing is placed, every list and row is local, and what a
// simulation can tell is each rank's work, its imbalance, the gradients'
// all-reduce and the memory a device holds. RunTyped samples each rank's
// share as the typed step does (TypedHops.sample: per hop, every relation
// its fanout of its destination type's vertices, keyed by
// rng.Derive(seed, r), its new neighbours added to its source type's).

// TypedConfig is a simulated typed job.
type TypedConfig struct {
	Hosts   int `json:"hosts"`
	Devices int `json:"devices_per_host"`
	// Batch is the global batch: the seeds of one step over all ranks (a
	// multiple of the ranks; rank r takes the r-th slice).
	Batch int `json:"global_batch"`
	// Fanouts are per hop (hop 0 from the seeds) and relation, as
	// train.Config.TypedFanouts gives them.
	Fanouts [][]int `json:"fanouts"`
	Seed    uint64  `json:"seed"`
	Steps   int     `json:"steps"`   // steps simulated, of every rank
	Threads int     `json:"threads"` // ranks simulated at once (0: all cores)
}

// Ranks is the job's size.
func (c *TypedConfig) Ranks() int { return c.Hosts * c.Devices }

// TypedLayer is one layer's live sizes of a rank's step, as the typed
// plan counts them (TypedHops.Counts): the sources of every type and the
// sampled edges of every relation.
type TypedLayer struct {
	Src   []int64 `json:"sources"` // [type]
	Edges []int64 `json:"edges"`   // [relation]
}

// TypedRankStep is one rank's figures of one step.
type TypedRankStep struct {
	Seeds  int          `json:"seeds"`
	Layers []TypedLayer `json:"layers"` // bottom first
	// Edges are the step's sampled edges over every layer and relation
	// (the proxy of its work), RowBytes the bytes of its input rows (the
	// bottom layer's sources) read from the types' tables.
	Edges    int64 `json:"sampled_edges"`
	RowBytes int64 `json:"row_bytes"`
}

// TypedStep is one step of every rank.
type TypedStep struct {
	Epoch     int             `json:"epoch"`
	Step      int             `json:"step"`
	Ranks     []TypedRankStep `json:"ranks"`
	Imbalance float64         `json:"imbalance"` // the slowest rank's sampled edges over the mean
}

// TypeInfo is a vertex type as the simulation saw it.
type TypeInfo struct {
	Name     string `json:"name"`
	Vertices int64  `json:"vertices"`
	FeatDim  int    `json:"feat_dim"`  // 0: learned rows
	RowBytes int    `json:"row_bytes"` // a row of its table: the width times its dtype's size
}

// RelationInfo is a relation as the simulation saw it.
type RelationInfo struct {
	Name  string `json:"name"` // src:name:dst
	Src   int    `json:"src"`
	Dst   int    `json:"dst"`
	Edges int64  `json:"edges"`
}

// TypedResult is a typed simulation.
type TypedResult struct {
	Config     TypedConfig    `json:"config"`
	Dataset    string         `json:"dataset"`
	Types      []TypeInfo     `json:"types"`
	Relations  []RelationInfo `json:"relations"`
	Target     int            `json:"target"` // the seeds' type
	TrainSeeds int            `json:"train_seeds"`
	EpochSteps int            `json:"epoch_steps"` // steps of an epoch at the global batch
	Steps      []TypedStep    `json:"steps"`
	// Largest is every layer's largest sizes over the ranks and steps
	// (bottom first): the envelope the replay driver tightens to.
	Largest []TypedLayer `json:"largest"`
}

// RunTyped simulates cfg on the typed dataset ds.
func RunTyped(ds *dataset.Dataset, cfg TypedConfig) (*TypedResult, error) {
	if err := cfg.check(ds); err != nil {
		return nil, err
	}
	res := describeTyped(ds, cfg)
	if res.EpochSteps == 0 {
		return res, nil
	}
	n, b := cfg.Ranks(), cfg.Batch/cfg.Ranks()
	workers := make([]*typedWorker, min(cfg.Threads, n))
	for i := range workers {
		workers[i] = newTypedWorker(ds)
	}
	var perm []int32
	errs := make([]error, n)
	for k := range cfg.Steps {
		epoch, step := k/res.EpochSteps, k%res.EpochSteps
		if step == 0 {
			perm = train.Shuffle(ds.Train, cfg.Seed, epoch)
		}
		st := TypedStep{Epoch: epoch, Step: step, Ranks: make([]TypedRankStep, n)}
		key := rng.Key{Seed: cfg.Seed, Epoch: uint32(epoch), Step: uint32(step)}
		forEach(workers, n, func(w *typedWorker, r int) {
			lo := min(len(perm), step*cfg.Batch+r*b)
			hi := min(len(perm), step*cfg.Batch+(r+1)*b)
			errs[r] = w.sample(ds, cfg.Fanouts, perm[lo:hi], key, &st.Ranks[r])
		})
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		var most, sum int64
		for r := range st.Ranks {
			rs := &st.Ranks[r]
			rs.RowBytes = rowBytes(res.Types, rs.Layers[0].Src)
			most, sum = max(most, rs.Edges), sum+rs.Edges
			res.raise(rs.Layers)
		}
		if sum > 0 {
			st.Imbalance = float64(most) * float64(n) / float64(sum)
		}
		res.Steps = append(res.Steps, st)
	}
	return res, nil
}

// check fills cfg's defaults and refuses a job that cannot run on ds.
func (c *TypedConfig) check(ds *dataset.Dataset) error {
	if err := CheckSize(c.Hosts, c.Devices, c.Steps); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	if !ds.Typed() {
		return fmt.Errorf("simulate: %s has one vertex type: simulate it with Run", ds.Name)
	}
	if c.Batch < 1 || c.Batch%c.Ranks() != 0 {
		return fmt.Errorf("simulate: a global batch of %d seeds does not split evenly over %d ranks", c.Batch, c.Ranks())
	}
	if len(c.Fanouts) == 0 {
		return fmt.Errorf("simulate: no fanouts")
	}
	for h, f := range c.Fanouts {
		if len(f) != len(ds.Relations) {
			return fmt.Errorf("simulate: hop %d has %d fanouts for %d relations", h, len(f), len(ds.Relations))
		}
	}
	for _, rel := range ds.Relations {
		if err := rel.Graph.Narrow(); err != nil {
			return fmt.Errorf("simulate: relation %s: %w", rel.Name, err)
		}
	}
	if c.Threads <= 0 {
		c.Threads = runtime.GOMAXPROCS(0)
	}
	return nil
}

// describeTyped is the result of cfg on ds before any step: its types,
// relations and epoch.
func describeTyped(ds *dataset.Dataset, cfg TypedConfig) *TypedResult {
	res := &TypedResult{Config: cfg, Dataset: ds.Name, Target: ds.Target, TrainSeeds: len(ds.Train)}
	res.EpochSteps = (len(ds.Train) + cfg.Batch - 1) / cfg.Batch
	for _, ty := range ds.Types {
		size := 4
		if ty.FeaturesBF16 != nil {
			size = 2
		}
		res.Types = append(res.Types, TypeInfo{Name: ty.Name, Vertices: ty.Count, FeatDim: ty.FeatDim, RowBytes: ty.FeatDim * size})
	}
	for _, rel := range ds.Relations {
		name := ds.Types[rel.Src].Name + ":" + rel.Name + ":" + ds.Types[rel.Dst].Name
		res.Relations = append(res.Relations, RelationInfo{Name: name, Src: rel.Src, Dst: rel.Dst, Edges: rel.Graph.NumEdges()})
	}
	res.Largest = make([]TypedLayer, len(cfg.Fanouts))
	for l := range res.Largest {
		res.Largest[l] = TypedLayer{Src: make([]int64, len(ds.Types)), Edges: make([]int64, len(ds.Relations))}
	}
	return res
}

// raise raises res.Largest to a rank's layers.
func (res *TypedResult) raise(layers []TypedLayer) {
	for l, ly := range layers {
		for t, v := range ly.Src {
			res.Largest[l].Src[t] = max(res.Largest[l].Src[t], v)
		}
		for r, v := range ly.Edges {
			res.Largest[l].Edges[r] = max(res.Largest[l].Edges[r], v)
		}
	}
}

// rowBytes are the bytes of rows[t] rows of every type t.
func rowBytes(types []TypeInfo, rows []int64) int64 {
	var n int64
	for t, v := range rows {
		n += v * int64(types[t].RowBytes)
	}
	return n
}

// RelEdges are the step's sampled edges per relation, every layer's
// summed.
func (a TypedRankStep) RelEdges() []int64 {
	if len(a.Layers) == 0 {
		return nil
	}
	out := make([]int64, len(a.Layers[0].Edges))
	for _, ly := range a.Layers {
		for r, e := range ly.Edges {
			out[r] += e
		}
	}
	return out
}

// Add is a with b's figures added (a zero a takes b's shape).
func (a TypedRankStep) Add(b TypedRankStep) TypedRankStep {
	if a.Layers == nil {
		a.Layers = make([]TypedLayer, len(b.Layers))
		for l, ly := range b.Layers {
			a.Layers[l] = TypedLayer{Src: make([]int64, len(ly.Src)), Edges: make([]int64, len(ly.Edges))}
		}
	}
	a.Seeds += b.Seeds
	a.Edges += b.Edges
	a.RowBytes += b.RowBytes
	for l, ly := range b.Layers {
		for t, v := range ly.Src {
			a.Layers[l].Src[t] += v
		}
		for r, v := range ly.Edges {
			a.Layers[l].Edges[r] += v
		}
	}
	return a
}

// Max is a with each of b's figures where b's is larger (a zero a takes
// b's shape).
func (a TypedRankStep) Max(b TypedRankStep) TypedRankStep {
	if a.Layers == nil {
		return TypedRankStep{}.Add(b)
	}
	a.Seeds, a.Edges, a.RowBytes = max(a.Seeds, b.Seeds), max(a.Edges, b.Edges), max(a.RowBytes, b.RowBytes)
	for l, ly := range b.Layers {
		for t, v := range ly.Src {
			a.Layers[l].Src[t] = max(a.Layers[l].Src[t], v)
		}
		for r, v := range ly.Edges {
			a.Layers[l].Edges[r] = max(a.Layers[l].Edges[r], v)
		}
	}
	return a
}

// Div is a sum of k ranks' or steps' figures divided by k (rounded down):
// their mean. It changes a's layers in place.
func (a TypedRankStep) Div(k int) TypedRankStep {
	d := int64(max(k, 1))
	a.Seeds /= int(d)
	a.Edges /= d
	a.RowBytes /= d
	for _, ly := range a.Layers {
		for t := range ly.Src {
			ly.Src[t] /= d
		}
		for r := range ly.Edges {
			ly.Edges[r] /= d
		}
	}
	return a
}
