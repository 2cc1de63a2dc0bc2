package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputsCheckedFirst: an output file that cannot be written is an
// error naming the flag and the path before any work (bench --plot to a
// missing folder failed after the whole benchmark, naming a temporary
// file).
func TestOutputsCheckedFirst(t *testing.T) {
	folder := t.TempDir()
	missing := filepath.Join(folder, "no-such-folder")
	for _, c := range []struct {
		want string
		args []string
	}{
		{"--plot: cannot write " + filepath.Join(missing, "x.png") + ": the folder " + missing + " does not exist",
			[]string{"bench", "--preset", "tiny", "--device", "cpu", "--steps", "1", "--plot", filepath.Join(missing, "x.png")}},
		{"--plot: " + folder + " is a folder; name a file",
			[]string{"bench", "--preset", "tiny", "--device", "cpu", "--steps", "1", "--plot", folder}},
		{"--logits: cannot write " + filepath.Join(missing, "l.npy"),
			[]string{"eval", "--checkpoint", "c.ckpt", "--logits", filepath.Join(missing, "l.npy")}},
	} {
		code, _, stderr := fanout(t, c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "generated") || strings.Contains(stderr, "measuring") {
			t.Errorf("%v: exit %d, stderr %q; want %q before any work", c.args, code, stderr, c.want)
		}
	}
}
