package main

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
)

// TestGenIGBHSimTrains generates igbh-sim at scale 0.0005 (13,013
// vertices, a 2,000th of IGB-H medium): gen says the factor, info shows
// the six types with 1024 features each and 19 classes, and rsage learns
// it on the CPU far above the most common class of the test set.
func TestGenIGBHSimTrains(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "igbh")
	code, stdout, stderr := fanout(t, "gen", "igbh-sim", "--scale", "0.0005", "--threads", "2", "--out", data)
	if code != 0 || !strings.Contains(stdout, "wrote igbh-sim (scale 0.0005 of IGB-H medium) to "+data+": 13013 vertices") ||
		!strings.Contains(stderr, "generating igbh-sim (scale 0.0005 of IGB-H medium, 19 classes): 13013 vertices of 6 types") {
		t.Fatalf("gen: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = fanout(t, "info", data)
	for _, want := range []string{"vertices   13,013 of 6 types", "paper              5,000  1024 float32", "conference             2  1024 float32",
		"(paper, written_by, author) 19,927 edges", "(conference, rev_venue, paper) 500 edges", "classes    19 (target paper)",
		"split      train 3,000  valid 25  test 1,000", "scale 0.0005 of IGB-H medium"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Fatalf("info: exit %d, lacks %q\n%s%s", code, want, stdout, stderr)
		}
	}
	code, stdout, stderr = fanout(t, "train", "--data", data, "--device", "cpu", "--model", "rsage", "--layers", "2", "--hidden", "32",
		"--fanouts", "5,5", "--batch", "256", "--epochs", "4", "--lr", "0.01", "--seed", "1", "--out", filepath.Join(dir, "run"))
	m := regexp.MustCompile(`test accuracy ([0-9.]+)`).FindStringSubmatch(stdout)
	if code != 0 || m == nil {
		t.Fatalf("train: exit %d\n%s%s", code, stdout, stderr)
	}
	acc, _ := strconv.ParseFloat(m[1], 64)
	most := mostCommonShare(t, data)
	t.Logf("rsage test accuracy %.4f; the most common class %.4f of the test set", acc, most)
	if acc < 0.5 || acc < 3*most {
		t.Errorf("test accuracy %.4f: want at least 0.5 and 3 times the most common class's share %.4f", acc, most)
	}
	// Every type has features: two devices (of the CPU) train it, each
	// with the whole dataset.
	code, stdout, stderr = fanout(t, "train", "--data", data, "--device", "cpu", "--devices", "2", "--model", "rsage", "--layers", "2",
		"--hidden", "32", "--fanouts", "5,5", "--batch", "128", "--epochs", "1", "--out", filepath.Join(dir, "run2"))
	if code != 0 || !strings.Contains(stderr+stdout, "placement: igbh-sim is typed: every relation and feature table on every device") ||
		!strings.Contains(stdout, "test accuracy") {
		t.Fatalf("train on two devices: exit %d\n%s%s", code, stdout, stderr)
	}
}

// mostCommonShare is the share of the most common label among the test
// vertices of the dataset at dir.
func mostCommonShare(t *testing.T, dir string) float64 {
	t.Helper()
	d, err := dataset.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	count := map[int32]int{}
	most := 0
	for _, v := range d.Test {
		count[d.Labels[v]]++
		most = max(most, count[d.Labels[v]])
	}
	return float64(most) / float64(len(d.Test))
}

// TestGenVariants: --classes 2983 gives IGB's fine labels' count; --scale
// and --classes are refused, in one line naming the flag, where the value
// or the preset does not take them.
func TestGenVariants(t *testing.T) {
	data := filepath.Join(t.TempDir(), "fine")
	if code, stdout, stderr := fanout(t, "gen", "igbh-sim", "--scale", "0.0005", "--classes", "2983", "--no-reverse", "--out", data); code != 0 ||
		!strings.Contains(stderr, "(scale 0.0005 of IGB-H medium, 2983 classes)") {
		t.Fatalf("gen: exit %d\n%s%s", code, stdout, stderr)
	}
	d, err := dataset.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.NumClasses != 2983 || slices.Max(d.Labels) >= 2983 || slices.Max(d.Labels) < 2000 {
		t.Errorf("%d classes, largest label %d", d.NumClasses, slices.Max(d.Labels))
	}
	out := filepath.Join(t.TempDir(), "x")
	oneLineError(t, "--scale: preset igbh-sim: scale 1.5: want a share of its counts in (0, 1]", "gen", "igbh-sim", "--scale", "1.5", "--out", out)
	oneLineError(t, "--scale 0: give a value", "gen", "igbh-sim", "--scale", "0", "--out", out)
	oneLineError(t, "--scale: preset tiny: scale 0.5: an R-MAT preset has a fixed size", "gen", "tiny", "--scale", "0.5", "--out", out)
	oneLineError(t, "--classes: preset products-sim: classes 19: an R-MAT preset's classes are fixed (47)", "gen", "products-sim", "--classes", "19", "--out", out)
	oneLineError(t, "--classes: preset mag-sim: classes 1: want 2 to", "gen", "mag-sim", "--classes", "1", "--out", out)
	oneLineError(t, "schema igbh-sim: relation cites: 12 edges, more than half the 0 its types allow", "gen", "igbh-sim", "--scale", "0.0000001", "--out", out)
}
