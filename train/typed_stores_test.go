package train

import (
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
)

// typedStoreLosses trains cfg on ds for an epoch with the per-type stores
// that stores makes on the trainer's backend, and returns every step's
// loss.
func typedStoreLosses(t *testing.T, ds *dataset.Dataset, cfg Config, stores func(be backend.Backend) []featstore.Store) []float32 {
	t.Helper()
	be := cpu.New(2)
	var losses []float32
	opt := Options{OnStep: func(_, _ int, l float32) { losses = append(losses, l) }}
	if stores != nil {
		opt.TypedFeatures = stores(be)
	}
	tr, err := New(be, ds, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := tr.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	return losses
}

// TestTypedFeatureStores: per-type stores given to the trainer
// (Options.TypedFeatures, nil for hetero-tiny's featureless types, whose
// learned rows stay resident) serve the step: stores of the types' own
// tables train bit for bit as the tables the trainer uploads, stores of
// zero rows do not; stores of the wrong count, shape or type are refused
// by the type's name.
func TestTypedFeatureStores(t *testing.T) {
	ds := heteroTiny(t)
	cfg := heteroConfig(t, "rsage")
	cfg.Epochs = 1
	storesOf := func(zero bool) func(be backend.Backend) []featstore.Store {
		return func(be backend.Backend) []featstore.Store {
			st := make([]featstore.Store, len(ds.Types))
			for i, vt := range ds.Types {
				if vt.FeatDim == 0 {
					continue
				}
				table := vt.Features
				if zero {
					table = slices.Repeat([]float32{0}, len(table))
				}
				r, err := featstore.UploadAs(be, table, vt.FeatDim, 0)
				if err != nil {
					t.Fatal(err)
				}
				st[i] = r
			}
			return st
		}
	}
	want := typedStoreLosses(t, ds, cfg, nil)
	if got := typedStoreLosses(t, ds, cfg, storesOf(false)); !slices.Equal(got, want) {
		t.Fatalf("with the types' own tables as stores:\n%v\nuploaded by the trainer:\n%v", got, want)
	}
	if got := typedStoreLosses(t, ds, cfg, storesOf(true)); slices.Equal(got, want) {
		t.Fatal("stores of zero rows train as the tables: the trainer does not read its stores")
	}
	featured := slices.IndexFunc(ds.Types, func(vt dataset.VertexType) bool { return vt.FeatDim > 0 })
	featureless := slices.IndexFunc(ds.Types, func(vt dataset.VertexType) bool { return vt.FeatDim == 0 })
	be := cpu.New(1)
	narrow, err := featstore.UploadAs(be, make0(int(ds.Types[featured].Count)), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer narrow.Free()
	for _, c := range []struct {
		what   string
		stores []featstore.Store
		want   string
	}{
		{"one store short", []featstore.Store{nil}, "per-type feature stores"},
		{"a narrow store", at(len(ds.Types), featured, narrow), "type " + ds.Types[featured].Name + "'s feature store has"},
		{"a featureless type's", at(len(ds.Types), featureless, narrow), "type " + ds.Types[featureless].Name + ", which has no features"},
	} {
		tr, err := New(be, ds, cfg, Options{TypedFeatures: c.stores})
		if err == nil {
			tr.Close()
			t.Errorf("%s: accepted", c.what)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
	}
	if _, err := New(be, tinyData(t), tinyConfig(t), Options{TypedFeatures: []featstore.Store{narrow}}); err == nil || !strings.Contains(err.Error(), "one vertex type") {
		t.Errorf("per-type stores for a one-type dataset: %v", err)
	}
}

// make0 is n zeros.
func make0(n int) []float32 { return make([]float32, n) }

// at is n stores, s at i and nil elsewhere.
func at(n, i int, s featstore.Store) []featstore.Store {
	st := make([]featstore.Store, n)
	st[i] = s
	return st
}
