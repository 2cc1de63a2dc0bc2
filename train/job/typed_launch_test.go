package job

import (
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/cluster"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
)

// typedPreset generates the typed preset name at scale (0: its own).
func typedPreset(t *testing.T, name string, scale float64) *dataset.Dataset {
	t.Helper()
	p, err := rmat.LookupVariant(name, rmat.Variant{Scale: scale})
	if err != nil {
		t.Fatal(err)
	}
	return traintest.Generate(t, p)
}

// TestTypedLaunchPrepare: a launched rank of a typed dataset whose types
// all have features is fitted as one process is (rsage by default, no
// bfloat16 bottom products) and not refused; what does not train across
// ranks is refused in one line naming the flag: learned rows of a type
// without features on several processes or devices (one process of a
// launcher keeps them), the hybrid mode across processes, features spread
// over hosts.
func TestTypedLaunchPrepare(t *testing.T) {
	igbh, hetero := typedPreset(t, "igbh-sim", 0.0002), typedPreset(t, "hetero-tiny", 0)
	two := &cluster.Launch{Launcher: "mpirun", WorldSize: 2, Rank: 1, LocalWorldSize: 2}
	one := &cluster.Launch{Launcher: "mpirun", WorldSize: 1, LocalWorldSize: 1}
	base := Job{Config: train.Defaults(), Launch: two, Mode: train.Replay, Log: &strings.Builder{}, BottomDefault: true}
	base.Config.BottomProducts = "bf16"
	j := base
	if err := j.prepareTyped(igbh); err != nil {
		t.Fatalf("igbh-sim under a launcher of 2: %v", err)
	}
	if j.Config.Model != nn.KindRSAGE || j.Config.BottomProducts != "" {
		t.Fatalf("a launched rank's model %q, bottom products %q; want rsage and none", j.Config.Model, j.Config.BottomProducts)
	}
	j = base
	j.Launch = one
	if err := j.prepareTyped(hetero); err != nil {
		t.Fatalf("hetero-tiny under a launcher of 1: %v", err)
	}
	for _, c := range []struct {
		ds   *dataset.Dataset
		edit func(*Job)
		want string
	}{
		{hetero, func(*Job) {}, "launch: hetero-tiny is typed, and its type author has no features"},
		{hetero, func(j *Job) { j.Launch, j.Devices = nil, 2 }, "devices: hetero-tiny is typed, and its type author has no features"},
		{igbh, func(j *Job) { j.Mode = train.Hybrid }, "launch: igbh-sim is typed, and the hybrid mode trains typed graphs on one device"},
		{igbh, func(j *Job) { j.Placement.ShardFeatures = "hosts" }, "shard-features: igbh-sim is typed"},
		{igbh, func(j *Job) { j.Launch, j.Devices, j.Placement.ShardFeatures = nil, 2, "hosts" }, "shard-features: igbh-sim is typed"},
	} {
		j := base
		c.edit(&j)
		if err := j.prepareTyped(c.ds); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line naming %q", c.ds.Name, err, c.want)
		}
	}
}
