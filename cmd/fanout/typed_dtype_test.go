package main

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/fanout-gnn/fanout/train/job"
)

// TestTypedFeatureDTypeDefault: a typed dataset on disk takes the feature
// type one type's dataset takes: bfloat16 where training runs on GPUs, the
// dataset's own elsewhere, and --feature-dtype as given.
func TestTypedFeatureDTypeDefault(t *testing.T) {
	data := filepath.Join(t.TempDir(), "hetero")
	if code, _, stderr := fanout(t, "gen", "hetero-tiny", "--out", data); code != 0 {
		t.Fatalf("gen: %s", stderr)
	}
	for _, c := range []struct {
		gpu  bool
		args []string
		want string
	}{
		{true, nil, "bfloat16"},
		{false, nil, "float32"},
		{true, []string{"--feature-dtype", "float32"}, "float32"},
	} {
		fs := newFlags("train", io.Discard)
		var rf runFlags
		rf.add(fs, "tiny")
		for _, o := range trainOptions() {
			job.Register(fs, o.name, o.usage, o.field(nil, &rf))
		}
		hf := addHyperFlags(fs)
		if _, err := parse(fs, append([]string{"--data", data}, c.args...)); err != nil {
			t.Fatal(err)
		}
		rf.gpuProbed, rf.gpu = true, c.gpu
		if _, err := resolveConfig(fs, &rf, hf); err != nil {
			t.Fatal(err)
		}
		if rf.j.FeatureDType != c.want {
			t.Errorf("on GPUs %v, %v: feature type %q, want %q", c.gpu, c.args, rf.j.FeatureDType, c.want)
		}
	}
}
