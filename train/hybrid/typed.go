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
// vertex type with features (nil for a featureless type, whose learned
// rows the trainer keeps resident), whose caches share one budget.
type typedTiers struct {
	names  []string
	counts []int64             // per type, its vertices
	stores []*featstore.Tiered // per type; the trainer owns them once made
	scores [][]int64           // per type, the ranking's degrees in its store's order; nil where featureless
	opt    Options
	be     backend.Backend
	Stats  Stats
}

// refuseTyped names, in one line, what the hybrid mode does not do for
// typed graphs: hot vertices, host topology and fetching rows ahead.
func refuseTyped(ds *dataset.Dataset, opt Options) error {
	switch {
	case opt.Hot.Ratio > 0 || opt.trial != nil:
		return fmt.Errorf("hot-ratio: %s is typed, and the hybrid mode's hot vertices are one-type graphs' (give --hot-ratio 0)", ds.Name)
	case opt.Topology == TopologyHost:
		return fmt.Errorf("hybrid: %s is typed, and host topology is one-type graphs' (its relations stay in GPU memory)", ds.Name)
	case opt.FetchAhead:
		return fmt.Errorf("fetch-ahead: %s is typed, and fetching rows a step ahead is one-type graphs' (drop --fetch-ahead)", ds.Name)
	}
	return nil
}

// newTypedTiers ranks every type's rows (DegreeRanking) and makes be's
// tiered store of each type with features, as opt.FeatureDType says
// (every row in host memory, the caches empty until BeforeCapture).
func newTypedTiers(be backend.Backend, ds *dataset.Dataset, opt Options) (*typedTiers, error) {
	tt := &typedTiers{opt: opt, be: be}
	for i, vt := range ds.Types {
		tt.names, tt.counts = append(tt.names, vt.Name), append(tt.counts, vt.Count)
		if vt.FeatDim == 0 {
			tt.stores, tt.scores = append(tt.stores, nil), append(tt.scores, nil)
			continue
		}
		order, scores, err := DegreeRanking(ds, i)
		if err != nil {
			tt.free()
			return nil, err
		}
		s, err := featstore.NewTiered(be, vt.FeatureTable(), vt.FeatDim, order, opt.FeatureDType)
		if err != nil {
			tt.free()
			return nil, fmt.Errorf("hybrid: type %s: %w", vt.Name, err)
		}
		tt.stores, tt.scores = append(tt.stores, s), append(tt.scores, scores)
	}
	return tt, nil
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
	p, err := tt.place(backend.MemoryOf(tt.be).InUseBytes(), env.Bytes)
	if err != nil {
		return err
	}
	tt.Stats.Placement = p
	if tt.opt.Log != nil {
		p.Print(tt.opt.Log)
	}
	for i, s := range tt.stores {
		if s != nil {
			if err := s.Fill(int(p.Types[i].CacheRows)); err != nil {
				return fmt.Errorf("hybrid: type %s: %w", tt.names[i], err)
			}
		}
	}
	return nil
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
	}
	room, err := roomLeft(p.Budget, resident, envelope, p.Margin)
	if err != nil {
		return p, err
	}
	take := SplitCache(room, tt.opt.CacheRows, rb, tt.scores)
	for i, s := range tt.stores {
		tp := TypePlacement{Name: tt.names[i], RowBytes: rb[i], Rows: tt.counts[i], CacheRows: take[i]}
		if s != nil {
			tp.HostRows = s.Rows() - take[i]
		}
		p.CacheRows += tp.CacheRows
		p.HostRows += tp.HostRows
		p.Types = append(p.Types, tp)
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
