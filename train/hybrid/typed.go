package hybrid

import (
	"context"
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/train"
)

// typedTiers are a typed run's feature tiers: a featstore.Tiered per
// vertex type with features in memory, or a featstore.Disk per type
// whose features are on disk (nil for a featureless type, whose
// learned rows the trainer keeps resident), whose caches share one budget
// and whose host tiers share Options.HostMemory.
type typedTiers struct {
	names  []string
	counts []int64           // per type, its vertices
	stores []TierStore       // per type; the trainer owns them once made
	disks  []*featstore.Disk // per type, its store where the features are on disk, else nil
	scores [][]int64         // per type, the ranking's degrees in its store's order; nil where featureless
	files  []string          // per type, its feature file where on disk, else ""
	epochs *epochs           // the disk tiers per epoch; nil where no type's features are on disk
	opt    Options
	be     backend.Backend
	base   int64 // backend memory in use before the replay driver provisions the step
	Stats  Stats
}

// refuseTyped names, in one line, what the hybrid mode does not do for
// typed graphs: hot vertices, host topology and fetching rows ahead; and
// a host tier smaller than features already in memory, or host tier rows
// staged without a disk tier.
func refuseTyped(ds *dataset.Dataset, opt Options) error {
	switch {
	case opt.Hot.Ratio > 0 || opt.trial != nil:
		return fmt.Errorf("hot-ratio: %s is typed, and the hybrid mode's hot vertices are one-type graphs' (give --hot-ratio 0)", ds.Name)
	case opt.Topology == TopologyHost:
		return fmt.Errorf("hybrid: %s is typed, and host topology is one-type graphs' (its relations stay in GPU memory)", ds.Name)
	case opt.FetchAhead:
		return fmt.Errorf("fetch-ahead: %s is typed, and fetching rows a step ahead is one-type graphs' (drop --fetch-ahead)", ds.Name)
	case opt.Lookahead > 1:
		return fmt.Errorf("lookahead: %s is typed, and starting gathers steps ahead is one-type graphs' (drop --lookahead)", ds.Name)
	case opt.StageHost && !featuresOnDisk(ds):
		return noStaging(ds)
	case opt.HostMemory > 0 && !featuresOnDisk(ds) && ds.FeatureBytes() > opt.HostMemory:
		return fmt.Errorf("host-memory: %s of host tiers, but %s's %s of features are in memory already; open the dataset with its features on disk (--data)",
			mib(opt.HostMemory), ds.Name, mib(ds.FeatureBytes()))
	}
	return nil
}

// featuresOnDisk reports whether some type of ds has its features on disk.
func featuresOnDisk(ds *dataset.Dataset) bool {
	for _, vt := range ds.Types {
		if vt.FeatureFile != nil {
			return true
		}
	}
	return false
}

// newTypedTiers ranks every type's rows (DegreeRanking) and makes be's
// tiered store of each type with features, as opt.FeatureDType says
// (every row in host memory, the caches empty until BeforeCapture).
func newTypedTiers(be backend.Backend, ds *dataset.Dataset, opt Options) (*typedTiers, error) {
	tt := &typedTiers{opt: opt, be: be}
	for i, vt := range ds.Types {
		tt.names, tt.counts = append(tt.names, vt.Name), append(tt.counts, vt.Count)
		tt.stores, tt.disks, tt.scores, tt.files = append(tt.stores, nil), append(tt.disks, nil), append(tt.scores, nil), append(tt.files, "")
		if vt.FeatDim == 0 {
			continue
		}
		order, scores, err := DegreeRanking(ds, i)
		if err == nil {
			err = tt.newStore(i, vt, order)
		}
		if err != nil {
			tt.free()
			return nil, err
		}
		tt.scores[i] = scores
	}
	return tt, nil
}

// newStore makes type i's store over vt's features ranked by order: a
// featstore.Disk where they are on disk, else a featstore.Tiered.
func (tt *typedTiers) newStore(i int, vt dataset.VertexType, order []int32) error {
	if vt.FeatureFile != nil {
		d, err := newTypedDisk(tt.be, vt, order, tt.opt)
		if err != nil {
			return err
		}
		tt.stores[i], tt.disks[i], tt.files[i] = d, d, vt.FeatureFile.Path
		return nil
	}
	s, err := featstore.NewTiered(tt.be, vt.FeatureTable(), vt.FeatDim, order, tt.opt.FeatureDType)
	if err != nil {
		return fmt.Errorf("hybrid: type %s: %w", vt.Name, err)
	}
	tt.stores[i] = s
	return nil
}

// features are the stores for train.Options.TypedFeatures.
func (tt *typedTiers) features() []featstore.Store {
	f := make([]featstore.Store, len(tt.stores))
	for i, s := range tt.stores {
		if s != nil {
			f[i] = s
		}
	}
	return f
}

// rowBytes is each type's feature row in bytes (0: featureless).
func (tt *typedTiers) rowBytes() []int64 {
	b := make([]int64, len(tt.stores))
	for i, s := range tt.stores {
		if s != nil {
			b[i] = int64(s.Dim()) * int64(s.DType().Size())
		}
	}
	return b
}

// BeforeCapture splits the room the budget leaves once the step is
// provisioned (the relations, the learned tables, the plan and the model
// resident, and the margin kept) among the types' caches (SplitCache) and
// fills each with its best rows.
func (tt *typedTiers) BeforeCapture(env train.EnvelopeReport) error {
	resident := backend.MemoryOf(tt.be).InUseBytes()
	// The typed replay driver reports no envelope bytes: its plans and
	// the model's workspace are what it provisioned since the start.
	p, err := tt.place(resident, max(env.Bytes, resident-tt.base))
	if err != nil {
		return err
	}
	tt.Stats.Placement = p
	if tt.opt.Log != nil {
		p.Print(tt.opt.Log)
	}
	for i, s := range tt.stores {
		var err error
		switch cached := int(p.Types[i].CacheRows); {
		case tt.disks[i] != nil:
			tt.disks[i].SetHostRows(p.Types[i].HostRows)
			err = tt.disks[i].Fill(cached)
		case s != nil:
			err = s.Fill(cached)
		}
		if err != nil {
			return fmt.Errorf("hybrid: type %s: %w", tt.names[i], err)
		}
	}
	if !tt.onDisk() {
		return nil
	}
	tt.Stats.Placement.Host = tt.hostUse()
	return checkHostUse(tt.Stats.Placement.Host, tt.opt.HostMemory)
}

// place is the typed placement for resident bytes (of which the step's
// envelope): without a budget every row fits; Options.CacheRows, when
// set, is the rows asked for in all, which must fit.
func (tt *typedTiers) place(resident, envelope int64) (Placement, error) {
	rb := tt.rowBytes()
	var all, rows int64
	for i, s := range tt.stores {
		if s != nil {
			all += s.Rows() * rb[i]
			rows += s.Rows()
		}
	}
	p := Placement{Budget: tt.opt.Budget, Resident: resident, Envelope: envelope, Margin: tt.opt.margin(), Rows: rows}
	if p.Budget <= 0 {
		p.Budget = resident + all
	} else {
		p.Margin += growthRoom(envelope, tt.opt.Replay)
	}
	room, err := roomLeft(p.Budget, resident, envelope, p.Margin)
	if err != nil {
		return p, err
	}
	take := SplitCache(room, tt.opt.CacheRows, rb, tt.scores)
	host, use, err := tt.splitHost(rb, take)
	if err != nil {
		return p, err
	}
	for i, s := range tt.stores {
		tp := TypePlacement{Name: tt.names[i], RowBytes: rb[i], Rows: tt.counts[i], CacheRows: take[i]}
		if s != nil {
			tp.HostRows = s.Rows() - take[i]
		}
		if tt.disks[i] != nil {
			tp.HostRows, tp.DiskFile = host[i], tt.files[i]
			tp.DiskRows = s.Rows() - take[i] - host[i]
		}
		p.CacheRows += tp.CacheRows
		p.HostRows += tp.HostRows
		p.DiskRows += tp.DiskRows
		p.Types = append(p.Types, tp)
	}
	if tt.onDisk() {
		p.HostMemory, p.Host = tt.opt.HostMemory, use
	}
	if want := tt.opt.CacheRows; want > p.CacheRows {
		return p, fmt.Errorf("cache-rows: %d rows do not fit: the budget leaves room for %d of the types' rows", want, p.CacheRows)
	}
	return p, nil
}

// finish reads the stores' counters into Stats, summed over the types
// (call before the trainer, which owns the stores, is closed).
func (tt *typedTiers) finish() error {
	st := &tt.Stats
	for _, s := range tt.stores {
		if s == nil {
			continue
		}
		if err := st.addStore(s); err != nil {
			return err
		}
	}
	if err := tt.finishDisks(); err != nil {
		return err
	}
	st.settle(tt.be)
	return nil
}

// free releases the stores (where the trainer was not made).
func (tt *typedTiers) free() {
	for _, s := range tt.stores {
		if s != nil {
			s.Free()
		}
	}
}

// runTyped is Run for a typed dataset: the types' tiered stores under one
// budget, the replay driver around the typed step.
func runTyped(ctx context.Context, be backend.Backend, ds *dataset.Dataset, cfg train.Config, topt train.Options, opt Options) (*train.Summary, *Stats, error) {
	if err := refuseTyped(ds, opt); err != nil {
		return nil, nil, err
	}
	tt, err := newTypedTiers(be, ds, opt)
	if err != nil {
		return nil, nil, err
	}
	topt.TypedFeatures, topt.Mode = tt.features(), train.Hybrid
	tr, err := train.New(be, ds, cfg, topt)
	if err != nil {
		tt.free()
		return nil, nil, err
	}
	defer tr.Close()
	ropt := opt.Replay
	ropt.BeforeCapture = tt.BeforeCapture
	if err := tt.reserveDisks(tr, &ropt); err != nil {
		return nil, nil, err
	}
	tt.base = backend.MemoryOf(be).InUseBytes()
	sum, rst, err := tr.RunReplay(ctx, ropt)
	if err != nil {
		return nil, nil, err
	}
	if err := tt.finish(); err != nil {
		return nil, nil, err
	}
	tt.Stats.ReplayStat, tt.Stats.Launches = rst, rst.Launches
	return sum, &tt.Stats, nil
}

// growthRoom is the room a budget keeps for a tightened envelope's
// growths: a replayed typed step grows when a later batch passes the first
// steps' largest sizes times the margin. On igbh-sim (MLPerf's settings,
// 2 epochs) its step grew by about 9% in all, twice the default margin's
// 5%, past a margin of 3% of the budget; so twice (margin - 1) of the
// envelope is kept. A conservative envelope never grows.
func growthRoom(envelope int64, r train.ReplayOptions) int64 {
	if r.Conservative {
		return 0
	}
	m := r.Margin
	if m <= 0 {
		m = train.DefaultMargin
	}
	return int64(float64(envelope) * 2 * (m - 1))
}
