package multigpu

import (
	"errors"
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
)

// Exchange is the feature rows of a job spread over its ranks in hosts
// (featstore.Layout) and fetched with all-to-alls (featstore.Exchanged):
// the path to rows on other hosts, which peer memory cannot reach. The
// ranks given are this process's (all of an in-process group, or the one
// rank of a process of a multi-process job); the layout is the job's.
type Exchange struct {
	Layout   *featstore.Layout
	RowBytes []int64 // per rank of the job: bytes of feature rows it holds
	stores   []*featstore.Exchanged
}

// PlaceExchanged lays the rows out over the job's ranks (its size is the
// ranks' collective's) in hosts of perHost ranks, with the rows of
// replicated on every rank, and sets each of ranks' Options.Features to
// its store. With reuse, each gather keeps the rows it fetched for the
// next. Every rank of the job must make the same call. The trainers free
// the stores, which keep their counters.
func PlaceExchanged(ds *dataset.Dataset, ranks []Rank, perHost int, replicated []int32, reuse bool) (*Exchange, error) {
	if len(ranks) == 0 || ranks[0].Coll == nil {
		return nil, errors.New("multigpu: exchanged features need the ranks' collective")
	}
	l, err := featstore.PlaceHosts(ds.Graph, ranks[0].Coll.Size(), perHost, replicated)
	if err != nil {
		return nil, err
	}
	x := &Exchange{Layout: l, RowBytes: l.RowBytes(ds.FeatDim)}
	for i := range ranks {
		s, err := featstore.NewExchanged(ranks[i].Backend, ranks[i].Coll, ds.FeatureTable(), ds.FeatDim, l, reuse)
		if err != nil {
			for j := range i {
				ranks[j].Options.Features = nil
			}
			for _, s := range x.stores {
				s.Free()
			}
			return nil, fmt.Errorf("device %d: %w", ranks[i].Coll.Rank(), err)
		}
		x.stores = append(x.stores, s)
		ranks[i].Options.Features = s
	}
	return x, nil
}

// Counts are the counters of this process's ranks, added; read them after
// Run.
func (x *Exchange) Counts() (featstore.ExchangeCounts, error) {
	var sum featstore.ExchangeCounts
	for r, s := range x.stores {
		c, err := s.Counts()
		if err != nil {
			return sum, fmt.Errorf("device %d: %w", r, err)
		}
		sum = sum.Plus(c)
	}
	return sum, nil
}

// ExchangeFeatures says whether a job's features can be exchanged: every
// rank's backend needs the exchange ops (backend.Exchanger). The rows are
// exchanged as float32 (a bfloat16 dataset's held rows are widened).
func ExchangeFeatures(ds *dataset.Dataset, ranks []Rank) error {
	for i, r := range ranks {
		if backend.ExchangerOf(r.Backend) == nil {
			return fmt.Errorf("device %d (%s) cannot exchange rows with other ranks", i, r.Backend.Name())
		}
	}
	return nil
}
