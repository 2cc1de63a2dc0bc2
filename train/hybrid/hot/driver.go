// Package hot holds the hybrid mode's hot vertices in one place
// (NeutronOrch's layer split): which vertices are hot is the hybrid
// driver's ranking; this package computes their bottom-layer rows on a CPU
// backend for each super-batch of steps (cpu.go), on a schedule of bounded
// staleness (Driver), and hands them to the training step through one
// seam, Rows (train.Hot, and through it nn.Hot), over one capability of
// the training backend, backend.HotRows.
package hot

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/train"
)

// Options are the hybrid mode's CPU-computed hot vertices (NeutronOrch's
// layer split): for each super-batch of SuperBatch consecutive steps the
// CPU computes the bottom-layer rows of the hottest bottom-layer
// destinations, and the GPU neither samples nor gathers their
// neighbourhoods.
type Options struct {
	// Ratio is the fraction of the vertices that are hot: the first of the
	// ranking by how many pre-sampled batches have them as bottom-layer
	// destinations (never a vertex no batch reached). 0: none.
	Ratio float64
	// Staleness K: super-batch g uses the weights as they were at the start
	// of super-batch g-K (after the last step of g-K-1; the run's first
	// weights for g-K before the first super-batch). K = 0 computes the
	// rows with the weights of the moment, so the GPU waits for the CPU;
	// K = 1 lets the CPU compute super-batch g+1's rows while the GPU
	// trains g.
	Staleness int
	// SuperBatch is the number of steps that share one set of hot rows.
	SuperBatch int
	// Outputs makes the CPU compute the hot vertices' bottom-layer outputs
	// (its product with the weights of Staleness super-batches ago, and
	// later the rows' share of the weight gradient) even where the model
	// can take their aggregated inputs instead (nn.Model.HotInputs: every
	// model but GAT), which the GPU multiplies by the weights of the
	// moment: no weight is stale and the gradient is exact.
	Outputs bool
	// Sequential computes the rows at each super-batch's start on the
	// calling goroutine instead of ahead on a worker: the reference
	// schedule, which the pipelined one equals bitwise.
	Sequential bool
	// NewCPU makes the backend the CPU computes on (the caller's CPU
	// backend with its threads); required with hot vertices (the driver
	// builds no backend itself).
	NewCPU func() (backend.Backend, error)
}

// Stats are what the hot vertices cost and saved.
type Stats struct {
	Vertices     int     `json:"hot_vertices"`
	SuperBatches int     `json:"super_batches"`   // rows computed
	Inputs       bool    `json:"hot_inputs"`      // the rows are aggregated inputs (else outputs)
	Gradients    int     `json:"gradients"`       // hot shares of layer 0's weight gradient computed
	CPUSeconds   float64 `json:"cpu_s"`           // computing rows and gradients, in all
	WaitSeconds  float64 `json:"wait_s"`          // the training loop waiting for them
	TableBytes   int64   `json:"hot_table_bytes"` // host memory of the rows (K+1 super-batches)
	GradBytes    int64   `json:"hot_grad_bytes"`  // device memory collecting the rows' gradient
}

// task is one super-batch's rows, or the hot share of layer 0's weight
// gradient, to compute.
type task struct {
	g       int         // global super-batch index
	weights [][]float32 // the model's parameters to compute with
	dh      []float32   // for a gradient: the hot rows' output gradient, summed over the super-batch
	grad    [][]float32 // the gradient's result (LayerWeights(0) order)
	done    chan error
}

// Driver keeps the hot rows of the replay driver's super-batches: its
// BeforeRun is the replay driver's (train.ReplayOptions.BeforeRun, with
// Segment the super-batch).
type Driver struct {
	opt   Options
	be    backend.Backend // the trainer's
	model *nn.Model       // the trainer's
	slot  backend.Buffer  // on be: I32 [N]
	base  backend.Buffer  // on be: I32 [1]
	table []float32       // (K+1) parts of [hot, dim], host memory both backends read in place
	tab   backend.Buffer  // table on be (UploadHost)
	ids   []int32         // hot vertices in slot order
	dim   int             // the rows' width: layer 0's input (inputs) or output
	// inputs: the rows are layer 0's aggregated neighbour inputs
	// (Rows.Inputs), which need no weights and pass no gradient back.
	inputs bool
	steps  int // steps per epoch
	perEp  int // super-batches per epoch
	cur    int // the super-batch whose rows are in place; -1 none
	tasks  map[int]*task
	grads  map[int]*task       // gradients by super-batch
	used   map[int][][]float32 // the weights each super-batch's rows were computed with
	acc    backend.Buffer      // on be: F32 [hot, dim], the hot rows' output gradient (Rows.TakeGradient)
	extra  []backend.Buffer    // on be: the hot share added to layer 0's weight gradients (Rows.AddWeightGradient)
	zero   bool                // extra holds zeros
	work   chan *task
	cpu    *cpuRows
	total  int // super-batches the run trains (no rows are made past them)

	mu    sync.Mutex // guards stats, which the worker updates
	stats Stats
}

// New makes the hot vertices the first ratio·N of ranked (the vertices
// some pre-sampled batch has as bottom-layer destinations, most often
// first), allocates their tables on be (which must have backend.HotRows)
// and starts the CPU's worker. tr's inputs get the hot rows
// (Inputs().Hot).
func New(tr *train.Trainer, be backend.Backend, ds *dataset.Dataset, cfg train.Config, opt Options, ranked []int32) (*Driver, error) {
	ops, err := backend.HotRowsOf(be)
	if err != nil {
		return nil, fmt.Errorf("hot vertices: %w", err)
	}
	L := len(cfg.Fanouts)
	switch {
	case L < 2:
		return nil, fmt.Errorf("hot vertices: the model needs at least 2 layers (the bottom layer's rows feed the next), it has %d", L)
	case opt.Ratio < 0 || opt.Ratio > 1:
		return nil, fmt.Errorf("hot-ratio: %v is not a fraction in [0, 1]", opt.Ratio)
	case opt.Staleness < 0:
		return nil, fmt.Errorf("staleness: %d is negative", opt.Staleness)
	case opt.SuperBatch < 1:
		return nil, fmt.Errorf("super-batch: %d steps; need at least 1", opt.SuperBatch)
	case opt.NewCPU == nil:
		return nil, fmt.Errorf("hot vertices: Options.NewCPU is nil: the rows need a CPU backend to be computed on")
	}
	ids := ranked[:min(int(math.Ceil(opt.Ratio*float64(ds.Graph.NumNodes))), len(ranked))]
	in, dim := tr.Model().Config().Dims(0)
	inputs := !opt.Outputs && tr.Model().HotInputs()
	if inputs {
		dim = in
	}
	d := &Driver{opt: opt, be: be, model: tr.Model(), ids: ids, dim: dim, inputs: inputs, cur: -1, tasks: map[int]*task{},
		grads: map[int]*task{}, used: map[int][][]float32{}}
	d.steps = (len(ds.Train) + cfg.Batch - 1) / cfg.Batch
	d.perEp = (d.steps + opt.SuperBatch - 1) / opt.SuperBatch
	d.total = cfg.Epochs * d.perEp
	slot := make([]int32, ds.Graph.NumNodes)
	for v := range slot {
		slot[v] = -1
	}
	for s, v := range ids {
		slot[v] = int32(s)
	}
	parts := opt.Staleness + 1
	d.table = make([]float32, max(1, parts*len(ids)*dim))
	d.stats = Stats{Vertices: len(ids), Inputs: inputs, TableBytes: int64(len(d.table)) * 4}
	if !inputs {
		d.stats.GradBytes = int64(len(ids)) * int64(dim) * 4
	}
	if d.cpu, err = newCPURows(ds, cfg, tr.Model(), ids, inputs, opt); err != nil {
		return nil, err
	}
	if err := d.upload(tr, ops, slot); err != nil {
		d.Close()
		return nil, err
	}
	if !opt.Sequential {
		d.work = make(chan *task, parts+1)
		go d.worker()
	}
	return d, nil
}

// upload puts the slot table, the base and the row table on the trainer's
// backend and hands them to its inputs.
func (d *Driver) upload(tr *train.Trainer, ops backend.HotRows, slot []int32) error {
	var err error
	if d.slot, err = d.be.Upload(slot); err != nil {
		return fmt.Errorf("hot vertices: %w", err)
	}
	if d.base, err = d.be.Alloc(backend.I32, 1); err != nil {
		return fmt.Errorf("hot vertices: %w", err)
	}
	if d.tab, err = backend.UploadHost(d.be, d.table); err != nil {
		return fmt.Errorf("hot vertices: %d MiB of host rows: %w", len(d.table)*4>>20, err)
	}
	rows := &Rows{HotTable: nn.HotTable{Ops: ops, Slot: d.slot, Table: d.tab, Base: backend.Count{Buf: d.base, Cap: 1}, InputRows: d.inputs}}
	if !d.inputs {
		if d.acc, err = d.be.Alloc(backend.F32, max(1, len(d.ids)*d.dim)); err != nil {
			return fmt.Errorf("hot vertices: %d MiB for the rows' gradient: %w", len(d.ids)*d.dim*4>>20, err)
		}
		for _, p := range d.model.LayerWeights(0) {
			b, err := d.be.Alloc(backend.F32, p.W.Len())
			if err != nil {
				return fmt.Errorf("hot vertices: %w", err)
			}
			d.extra = append(d.extra, b)
		}
		d.zero = true
		rows.Grad, rows.Extra = d.acc, d.extra
	}
	in := tr.Inputs()
	if rows.bottom, err = ops.MaskGraph(in.Graph, d.slot); err != nil {
		return fmt.Errorf("hot vertices: %w", err)
	}
	in.Hot = rows
	return nil
}

// superBatch is the global index of the super-batch holding step of epoch.
func (d *Driver) superBatch(epoch, step int) int {
	return epoch*d.perEp + step/d.opt.SuperBatch
}

// BeforeRun is the replay driver's BeforeRun. With inputs, super-batch
// g+K's rows are started (they need no weights) and g's waited for and put
// in place. With outputs: at the start of super-batch
// g the weights of the moment are W_g, which serve super-batch g+K's rows;
// the output gradient the hot rows collected during the previous
// super-batch goes to the CPU, which computes their share of layer 0's
// weight gradient with the weights those rows were made with; g's rows
// (made from W_{g-K}) are waited for and put in place, and so is the share
// of super-batch g-2 (computed while g-1 trained), which g's steps add to
// layer 0's weight gradient, 1/steps of it each.
func (d *Driver) BeforeRun(epoch, step int) error {
	g := d.superBatch(epoch, step)
	if g == d.cur {
		return nil // a run resumed inside the super-batch (after an overflow)
	}
	if d.inputs {
		if d.cur < 0 {
			for h := g; h < g+d.opt.Staleness; h++ {
				d.start(h, nil, nil)
			}
		}
		d.start(g+d.opt.Staleness, nil, nil)
		return d.place(g)
	}
	w, err := d.weights()
	if err != nil {
		return err
	}
	if d.cur < 0 {
		// The first super-batch of this driver: W_j for j < g is the
		// weights of the moment, and no gradient has been collected (the
		// warm-up step before the capture added to the accumulator).
		d.be.Fill(d.acc, 0)
		for h := g; h < g+d.opt.Staleness; h++ {
			d.start(h, w, nil)
		}
	} else if err := d.collect(d.cur); err != nil {
		return err
	}
	d.start(g+d.opt.Staleness, w, nil)
	if err := d.place(g); err != nil {
		return err
	}
	return d.apply(g)
}

// place waits for super-batch g's rows and points the table's base at
// them.
func (d *Driver) place(g int) error {
	t0 := time.Now()
	defer func() { d.count(func(s *Stats) { s.WaitSeconds += time.Since(t0).Seconds() }) }()
	if err := d.finish(d.tasks, g); err != nil {
		return err
	}
	d.be.Write(d.base, 0, []int32{int32(d.part(g) * len(d.ids))})
	d.cur = g
	return nil
}

// collect reads the output gradient the hot rows collected during
// super-batch prev, clears the accumulator, and starts the CPU's share.
func (d *Driver) collect(prev int) error {
	dh := make([]float32, len(d.ids)*d.dim)
	d.be.Read(dh, d.acc, 0)
	d.be.Fill(d.acc, 0)
	if err := d.be.Sync(); err != nil {
		return fmt.Errorf("hot vertices: reading the rows' gradient: %w", err)
	}
	w := d.used[prev]
	delete(d.used, prev)
	if w == nil {
		return fmt.Errorf("hot vertices: no weights recorded for super-batch %d", prev)
	}
	d.start(prev, w, dh)
	return nil
}

// apply puts the hot share of super-batch g-2's gradient in place for g's
// steps (zeros when there is none).
func (d *Driver) apply(g int) error {
	t := d.grads[g-2]
	if t == nil {
		if !d.zero {
			for _, b := range d.extra {
				d.be.Fill(b, 0)
			}
			d.zero = true
		}
		return nil
	}
	if err := d.finish(d.grads, g-2); err != nil {
		return err
	}
	steps := min(d.opt.SuperBatch, d.steps-(g%d.perEp)*d.opt.SuperBatch)
	for i, b := range d.extra {
		share := t.grad[i]
		for k := range share {
			share[k] /= float32(steps)
		}
		d.be.Write(b, 0, share)
	}
	d.zero = false
	return nil
}

// finish waits for task g of m and removes it.
func (d *Driver) finish(m map[int]*task, g int) error {
	t := m[g]
	if t == nil {
		return fmt.Errorf("hot vertices: nothing was started for super-batch %d", g)
	}
	delete(m, g)
	return <-t.done
}

// part is the table part that holds super-batch g's rows.
func (d *Driver) part(g int) int { return g % (d.opt.Staleness + 1) }

// weights copies the trainer's parameters to the host (the device has
// finished every step issued so far).
func (d *Driver) weights() ([][]float32, error) {
	ps := d.model.Params()
	w := make([][]float32, len(ps))
	for i, p := range ps {
		w[i] = make([]float32, p.W.Len())
		d.be.Read(w[i], p.W, 0)
	}
	if err := d.be.Sync(); err != nil {
		return nil, fmt.Errorf("hot vertices: reading the weights: %w", err)
	}
	return w, nil
}

// count updates the statistics.
func (d *Driver) count(f func(*Stats)) {
	d.mu.Lock()
	f(&d.stats)
	d.mu.Unlock()
}

// Stats are the driver's figures so far.
func (d *Driver) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stats
}

// start computes super-batch g's rows (dh nil) or its rows' share of
// layer 0's weight gradient with w: now (Sequential) or on the worker, in
// the order started. Rows past the run's last super-batch are not made.
func (d *Driver) start(g int, w [][]float32, dh []float32) {
	if dh == nil && g >= d.total {
		return
	}
	t := &task{g: g, weights: w, dh: dh, done: make(chan error, 1)}
	if dh == nil {
		d.tasks[g] = t
		d.used[g] = w
	} else {
		d.grads[g] = t
	}
	if d.work == nil {
		t.done <- d.compute(t)
		return
	}
	d.work <- t
}

func (d *Driver) worker() {
	for t := range d.work {
		t.done <- d.compute(t)
	}
}

// compute runs a task. Its samples are keyed by the super-batch's first
// step, so the gradient sees the blocks its rows were made from.
func (d *Driver) compute(t *task) error {
	t0 := time.Now()
	epoch, step := t.g/d.perEp, (t.g%d.perEp)*d.opt.SuperBatch
	var err error
	if t.dh != nil {
		t.grad, err = d.cpu.grads(t.weights, epoch, step, t.dh)
	} else {
		rows := len(d.ids) * d.dim
		err = d.cpu.rows(t.weights, epoch, step, d.table[d.part(t.g)*rows:(d.part(t.g)+1)*rows])
	}
	d.count(func(s *Stats) {
		s.CPUSeconds += time.Since(t0).Seconds()
		if t.dh != nil {
			s.Gradients++
		} else {
			s.SuperBatches++
		}
	})
	return err
}

// Close stops the worker, once its tasks are done, and frees what the
// driver allocated (the trainer's inputs must no longer be used for
// training). A second call does nothing.
func (d *Driver) Close() {
	if d.work != nil {
		close(d.work)
		for _, m := range []map[int]*task{d.tasks, d.grads} {
			for _, t := range m {
				<-t.done
			}
		}
		d.work = nil
	}
	for _, b := range append([]backend.Buffer{d.slot, d.base, d.tab, d.acc}, d.extra...) {
		if b != nil {
			d.be.Free(b)
		}
	}
	d.slot, d.base, d.tab, d.acc, d.extra = nil, nil, nil, nil, nil
	if d.cpu != nil {
		d.cpu.close()
		d.cpu = nil
	}
}

// Vertices is the number of hot vertices.
func (d *Driver) Vertices() int { return len(d.ids) }

// Inputs says whether the rows are layer 0's aggregated neighbour inputs
// (else its outputs).
func (d *Driver) Inputs() bool { return d.inputs }
