package job

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/train"
)

// TestTypedJobHybrid: --mode hybrid trains a typed preset (hetero-tiny) on
// one device as the replay mode does, epoch for epoch, with part of its
// rows cached (--hot-ratio auto becomes no hot vertices), and says every
// type's tiers; a group of devices and a hot ratio are refused in one line
// naming the flag.
func TestTypedJobHybrid(t *testing.T) {
	p, err := rmat.Lookup("hetero-tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg := PresetConfig(p)
	cfg.Epochs = 2
	j := Job{Config: cfg, Source: Source{Preset: "hetero-tiny"}, Device: "cpu", Threads: 2, Mode: train.Replay}
	_, want := losses(t, j)
	var log strings.Builder
	j.Mode, j.Log, j.Hybrid = train.Hybrid, &log, HybridSettings{CacheRows: 500, HotSpec: "auto", HotAuto: true, SuperBatch: 1}
	_, got := losses(t, j)
	if len(want) != 2 || !slices.Equal(got, want) {
		t.Fatalf("hybrid epochs' losses %v, replay %v", got, want)
	}
	for _, say := range []string{"hybrid mode", "paper: feature cache:", "field_of_study: feature cache:", "author: no features", "hybrid: cache hit rate"} {
		if !strings.Contains(log.String(), say) {
			t.Errorf("the log does not say %q:\n%s", say, log.String())
		}
	}
	for _, c := range []struct {
		edit func(*Job)
		want string
	}{
		{func(j *Job) { j.Devices = 2 }, "devices: hetero-tiny is typed"},
		{func(j *Job) { j.Hybrid = HybridSettings{CacheRows: -1, HotSpec: "0.1", HotRatio: 0.1} }, "--hot-ratio 0"},
	} {
		k := j
		k.Log = &strings.Builder{}
		c.edit(&k)
		if _, err := Run(context.Background(), k); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v, want one line naming %q", err, c.want)
		}
	}
}
