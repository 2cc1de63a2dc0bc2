package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestTrainHybrid: --mode hybrid prints its plan and figures and reaches
// the replay run's accuracy; a budget too small says how much is needed.
func TestTrainHybrid(t *testing.T) {
	var out, errb, rout bytes.Buffer
	if code := run(context.Background(), strings.Fields("train --device cpu --mode hybrid --cache-rows 1000 --epochs 2"), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"hybrid plan", "feature cache: 1000 of 16384 rows", "cache hit rate"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	if code := run(context.Background(), strings.Fields("train --device cpu --mode replay --epochs 2"), &rout, &bytes.Buffer{}); code != 0 {
		t.Fatal("replay run failed")
	}
	acc := func(s string) string { return strings.SplitN(s, ";", 2)[0] }
	if acc(out.String()) != acc(rout.String()) {
		t.Errorf("hybrid: %q; replay: %q", out.String(), rout.String())
	}
	errb.Reset()
	code := run(context.Background(), strings.Fields("train --device cpu --mode hybrid --gpu-memory 300KiB --epochs 1"), &bytes.Buffer{}, &errb)
	if code == 0 || !strings.Contains(errb.String(), "is needed") {
		t.Errorf("a 300 KiB budget: exit %d, %s", code, errb.String())
	}
}

func TestFeatureDTypeFlag(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), strings.Fields("train --device cpu --epochs 1 --feature-dtype bfloat16"), &out, &errb); code != 0 || !strings.Contains(out.String(), "test accuracy") {
		t.Fatalf("bfloat16: exit %d %s", code, errb.String())
	}
	oneLineError(t, `feature-dtype: "float16"`, "train", "--device", "cpu", "--feature-dtype", "float16")
}
