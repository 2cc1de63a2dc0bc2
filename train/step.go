package train

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/nn"
)

// Inputs are the dataset tables a step reads. The topology, labels and
// degrees are resident in backend memory; the features are served by a
// feature store (featstore.Store), which may keep them elsewhere (a cache
// and host memory in the hybrid mode, peers' memories on several GPUs).
type Inputs struct {
	Graph  backend.Graph
	Feat   featstore.Store // [N, Feat.Dim()] rows
	Labels backend.Buffer  // I32 [N]; -1 = unlabelled
	Degree backend.Buffer  // F32 [N] full-graph degree (GCN normalisation)
	// Hot, when set, are the hybrid mode's hot vertices: training steps
	// sample the bottom hop from Hot.Bottom() (the graph with hot vertices
	// masked) and take their bottom-layer rows through Hot.
	Hot Hot
	// Typed, for a typed dataset, are its relations, vertex spaces and
	// per-type rows; Graph, Feat and Degree are then unset.
	Typed *TypedInputs
	owned []backend.Buffer
	// ownGraph: Graph was uploaded here, and Free releases it.
	ownGraph bool
}

// Hot is the step's one seam to hot vertices, whose bottom-layer rows are
// computed elsewhere (package train/hybrid/hot implements it; the hybrid
// driver owns it): the model takes their rows through it (nn.Hot), and the
// bottom hop of a training step samples from Bottom.
type Hot interface {
	nn.Hot
	// Bottom is the graph in which the hot vertices have no neighbours
	// (the inputs' graph masked: backend.HotRows's MaskGraph).
	Bottom() backend.Graph
}

// FeatDim is the width of a feature row.
func (in *Inputs) FeatDim() int { return in.Feat.Dim() }

// Upload makes a dataset resident on be, features included, held as the
// dataset holds them (float32 or bfloat16). The CPU backend uses the
// dataset's (possibly memory-mapped) arrays in place.
func Upload(be backend.Backend, ds *dataset.Dataset) (*Inputs, error) {
	in, err := UploadWith(be, ds, nil)
	if err != nil {
		return nil, err
	}
	if in.Feat, err = featstore.UploadAs(be, ds.FeatureTable(), ds.FeatDim, 0); err != nil {
		in.Free(be)
		return nil, err
	}
	return in, nil
}

// UploadWith makes the topology, labels and degrees of ds resident on be and
// serves the features from feat (which Inputs.Free then releases). With a
// nil feat the caller sets Inputs.Feat before the first step.
func UploadWith(be backend.Backend, ds *dataset.Dataset, feat featstore.Store) (*Inputs, error) {
	return uploadInputs(be, ds, feat, nil)
}

// uploadInputs is UploadWith sampling from g (nil: ds's graph, uploaded).
func uploadInputs(be backend.Backend, ds *dataset.Dataset, feat featstore.Store, g backend.Graph) (*Inputs, error) {
	if err := ds.Graph.Narrow(); err != nil {
		return nil, err
	}
	in := &Inputs{Feat: feat, Graph: g}
	var err error
	if g == nil {
		if in.Graph, err = be.UploadGraph(ds.Graph); err != nil {
			return nil, fmt.Errorf("upload graph: %w", err)
		}
		in.ownGraph = true
	}
	deg := make([]float32, ds.Graph.NumNodes)
	for v := range deg {
		deg[v] = float32(ds.Graph.Degree(int64(v)))
	}
	for _, u := range []struct {
		dst  *backend.Buffer
		data any
		name string
	}{{&in.Labels, ds.Labels, "labels"}, {&in.Degree, deg, "degrees"}} {
		if *u.dst, err = be.Upload(u.data); err != nil {
			in.Free(be)
			return nil, fmt.Errorf("upload %s: %w", u.name, err)
		}
		in.owned = append(in.owned, *u.dst)
	}
	return in, nil
}

// Free releases the uploaded tables, the graph when it was uploaded here
// (where the backend can free graphs: backend.GraphFreer) and the feature
// store.
func (in *Inputs) Free(be backend.Backend) {
	for _, b := range in.owned {
		be.Free(b)
	}
	in.owned = nil
	if in.Typed != nil {
		in.Typed.free(be)
	}
	if in.ownGraph {
		backend.FreeGraph(be, in.Graph)
		in.ownGraph = false
	}
	if in.Feat != nil {
		in.Feat.Free()
		in.Feat = nil
	}
}

// Sample issues the sampling of every hop from the plan's seeds as they
// are (evaluation writes them itself): hop h samples Fanouts[h] neighbours
// of the previous hop's sources (hop 0: of the seeds) and relabels.
func (p *Plan) Sample(in *Inputs, seed uint64) {
	p.sample(in, in.Graph, seed, false)
}

// SampleTrain forms a training step's seeds from its items (FormSeeds)
// and samples: with hot vertices (in.Hot), the bottom hop samples no
// neighbours for them, and the task may sample each hop itself
// (Batch.Hop).
func (p *Plan) SampleTrain(in *Inputs, seed uint64) {
	bottom := in.Graph
	if in.Hot != nil {
		bottom = in.Hot.Bottom()
	}
	p.FormSeeds()
	p.sample(in, bottom, seed, true)
}

// FormSeeds issues the task's forming of the step's seeds from its items
// (Batch.Form).
func (p *Plan) FormSeeds() {
	if p.Task != nil {
		p.Task.Form()
	}
}

func (p *Plan) sample(in *Inputs, bottom backend.Graph, seed uint64, train bool) {
	if p.Typed != nil {
		p.Typed.sample(p, in.Typed, seed)
		return
	}
	g := in.Graph
	L := len(p.Fanouts)
	dst := p.Seeds
	for h := 0; h < L; h++ {
		b := p.Blocks[L-1-h]
		gh := g
		if h == L-1 {
			gh = bottom
		}
		r := backend.Rand{Seed: seed, Stream: uint32(h), Clock: p.Clock}
		hs := HopSample{Graph: gh, Dst: dst, Fanout: p.Fanouts[h], Rand: r, Out: b}
		if !train || p.Task == nil || !p.Task.Hop(h, hs) {
			p.be.SampleLayer(gh, dst, b.NumDst, p.Fanouts[h], r, b)
		}
		p.be.Relabel(gh, b)
		dst = b.SrcIDs
	}
}

// Gather copies the input features of the bottom block's sources (unless
// the model reads them in place: Table) and the seeds' labels (where the
// task reads them) into the plan: GatherRows and GatherLabels.
func (p *Plan) Gather(in *Inputs) {
	p.GatherRows(in)
	p.GatherLabels(in)
}

// GatherRows copies the input features of the bottom block's sources into
// the plan's rows, unless the model reads them in place (Table), or only
// those outside the cache where it reads the cached ones in place (Tiers).
// The replay driver's ring may have a featstore.Ahead store start it
// instead, to be landed later (lander).
func (p *Plan) GatherRows(in *Inputs) {
	if p.Typed != nil {
		p.Typed.gatherRows(in.Typed, p.be)
		return
	}
	if p.X == nil {
		return
	}
	b := p.Blocks[0]
	if p.Tiers != nil {
		p.Tiers.GatherMisses(b.SrcIDs, b.NumSrc, p.X)
		return
	}
	in.Feat.Gather(b.SrcIDs, b.NumSrc, p.X)
}

// GatherLabels copies the seeds' labels into the plan's own labels, where
// the task reads labels.
func (p *Plan) GatherLabels(in *Inputs) {
	if p.Labels != nil {
		p.be.Gather(in.Labels, 1, p.Seeds, p.NSeeds, p.Labels)
	}
}

// NNBatch is the model's view of the plan.
func (p *Plan) NNBatch(in *Inputs) *nn.Batch {
	b := &nn.Batch{Blocks: p.Blocks, X: p.X, Table: p.Table, Labels: p.Labels, Degree: in.Degree}
	if p.Tiers != nil {
		// The cache as it is now: filled before the step is captured.
		ops, _ := backend.TieredOf(p.be) // checked by tieredInput
		cache, slot := p.Tiers.Tiers()
		b.Tiered = &nn.Tiered{Ops: ops, Cache: cache, Slot: slot}
	}
	if p.Typed != nil {
		b.Typed = p.Typed.batch
	}
	if p.Shared {
		b.Share = &nn.Share{Den: p.Global}
	}
	return b
}

// Learn runs forward, the task's loss, backward and Adam (the model's
// parameters and the task's, Params). It returns the mean loss (F32 [1])
// and the count of correct predictions, both in backend memory. When
// adam.Skip is set (the replay driver's overflow flag), a flagged step
// leaves the parameters and the Adam step number untouched.
func (p *Plan) Learn(m *nn.Model, in *Inputs, seed uint64, adam backend.AdamConfig) (backend.Buffer, backend.Count) {
	b := p.NNBatch(in)
	if in.Hot != nil {
		b.Hot, b.Skip = in.Hot, adam.Skip
	}
	if p.ReduceFlag != nil {
		p.ReduceFlag(adam.Skip)
	}
	if !p.BesideLate {
		b.AfterBottom = p.Beside
	}
	out := m.Forward(b, true, backend.Rand{Seed: seed, Clock: p.Clock})
	loss, correct := p.Task.Loss(b, out)
	if p.BesideLate && p.Beside != nil {
		p.Beside()
	}
	p.Task.Backward(b, out)
	m.Backward(b)
	if p.Reduce != nil {
		p.Reduce(adam.Skip)
	}
	p.be.AddCount(p.AdamT, 1, adam.Skip)
	m.Update(p.AdamT, adam)
	for _, q := range p.Params {
		p.be.Adam(q.W, q.G, q.M, q.V, p.AdamT, adam)
	}
	if p.Typed != nil {
		p.Typed.update(in.Typed, p.be, p.AdamT, adam)
	}
	return loss, correct
}

// Predict runs the forward pass without dropout and returns the loss and
// correct count (node classification's evaluation) and the logits.
func (p *Plan) Predict(m *nn.Model, in *Inputs, seed uint64) (backend.Buffer, backend.Count, backend.Buffer) {
	b := p.NNBatch(in)
	logits := m.Forward(b, false, backend.Rand{Seed: seed, Clock: p.Clock})
	loss, correct := m.Loss(b, logits)
	return loss, correct, logits
}

// SetBatch writes the seeds and the clock of one step (host to backend);
// the whole batch is these seeds (evaluation, which forms no seeds).
func (p *Plan) SetBatch(seeds []int32, epoch, step int) {
	if len(seeds) > 0 {
		p.be.Write(p.Seeds, 0, seeds)
	}
	p.be.Write(p.Counts, p.NSeeds.Off, []int32{int32(len(seeds))})
	p.be.Write(p.Counts, p.Global.Off, []int32{int32(len(seeds))})
	p.be.Write(p.Clock, 0, []int32{int32(epoch), int32(step)})
}

// SetItems writes one rank's items of a training step whose whole batch
// (across the group) has global live items, and the clock; the task forms
// the seeds from them (SampleTrain).
func (p *Plan) SetItems(items []int32, global, epoch, step int) {
	if len(items) > 0 {
		p.be.Write(p.Items, 0, items)
	}
	p.be.Write(p.NItems.Buf, p.NItems.Off, []int32{int32(len(items))})
	p.be.Write(p.Counts, p.Global.Off, []int32{int32(global)})
	p.be.Write(p.Clock, 0, []int32{int32(epoch), int32(step)})
}
