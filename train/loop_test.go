package train

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/backend/record"
	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/internal/tolerance"
)

// metricsLines reads every line of run directory dir's metrics.jsonl.
func metricsLines(t *testing.T, dir string) []EpochStats {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, checkpoint.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []EpochStats
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var st EpochStats
		if err := json.Unmarshal(sc.Bytes(), &st); err != nil {
			t.Fatalf("metrics line %q: %v", sc.Text(), err)
		}
		out = append(out, st)
	}
	return out
}

// loopRun trains cfg on ds into a fresh run directory with the replay
// driver (through the recording wrapper) or the eager one, on the CPU, and
// returns the summary, every step's loss, the final parameters and the
// run directory.
func loopRun(t *testing.T, ds *dataset.Dataset, cfg Config, replay bool) (*Summary, []float32, [][]float32, string) {
	t.Helper()
	var be backend.Backend = cpu.New(2)
	if replay {
		be = record.New(be)
	}
	return loopRunOn(t, be, ds, cfg, replay)
}

// loopRunOn is loopRun on be.
func loopRunOn(t *testing.T, be backend.Backend, ds *dataset.Dataset, cfg Config, replay bool) (*Summary, []float32, [][]float32, string) {
	t.Helper()
	dir := t.TempDir()
	var losses []float32
	tr, err := New(be, ds, cfg, Options{RunDir: dir, Mode: modeOf(replay), OnStep: func(_, _ int, l float32) { losses = append(losses, l) }})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var sum *Summary
	if replay {
		sum, _, err = tr.RunReplay(context.Background(), ReplayOptions{})
	} else {
		sum, err = tr.Run(context.Background())
	}
	if err != nil {
		t.Fatal(err)
	}
	return sum, losses, params(t, tr), dir
}

// epochSteps is the steps of one of cfg's epochs on ds.
func epochSteps(ds *dataset.Dataset, cfg Config) int {
	return (len(ds.Train) + cfg.Batch - 1) / cfg.Batch
}

// wantPlaces is where a run of epochs epochs of steps steps validating
// every n steps within them writes its metrics lines: (epoch, step), the
// epoch's own line at step steps.
func wantPlaces(epochs, steps, n int) [][2]int {
	var out [][2]int
	for e := 1; e <= epochs; e++ {
		for s := n; s < steps; s += n {
			out = append(out, [2]int{e, s})
		}
		out = append(out, [2]int{e, steps})
	}
	return out
}

func TestEvalInterval(t *testing.T) {
	for _, c := range []struct {
		steps, every int
		frac         float64
		want         int
	}{{40, 0, 0.05, 2}, {10, 0, 0.3, 3}, {13, 0, 0.05, 1}, {1000, 0, 0.05, 50}, {10, 0, 1, 10}, {10, 4, 0, 4}, {10, 0, 0, 0}} {
		cfg := Config{EvalEverySteps: c.every, EvalEveryEpochs: c.frac}
		if got := cfg.EvalInterval(c.steps); got != c.want {
			t.Errorf("%d steps, every %d steps or %g epochs: interval %d, want %d", c.steps, c.every, c.frac, got, c.want)
		}
	}
}

// TestEvalWithinEpochs: validations within epochs, every 4 steps and every
// 0.25 epoch (⌊0.25·10⌋ = 2 steps), in both drivers: each is a metrics line
// at its epoch, step and global step, with the elapsed time growing line by
// line; the replay driver's validations are the eager one's (its losses
// summed in float32 on the device, to 1e-6); the best
// model is the best of every validation, its step in the summary.
func TestEvalWithinEpochs(t *testing.T) {
	ds := tinyData(t)
	cfg := tinyConfig(t)
	cfg.Epochs = 2
	steps := epochSteps(ds, cfg)
	if steps != 10 {
		t.Fatalf("tiny has %d steps an epoch; the case wants 10", steps)
	}
	for _, c := range []struct {
		name  string
		set   func(*Config)
		every int
	}{{"steps", func(c *Config) { c.EvalEverySteps = 4 }, 4}, {"epochs", func(c *Config) { c.EvalEveryEpochs = 0.25 }, 2}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := cfg
			c.set(&cfg)
			var eager []EpochStats
			for _, replay := range []bool{false, true} {
				sum, _, _, dir := loopRun(t, ds, cfg, replay)
				lines := metricsLines(t, dir)
				checkLines(t, lines, wantPlaces(cfg.Epochs, steps, c.every), steps, sum)
				if !replay {
					eager = lines
					continue
				}
				for i, l := range lines {
					// The captured evaluation sums its losses in float32.
					if l.Valid[MetricAcc] != eager[i].Valid[MetricAcc] || tolerance.Within(l.Valid[MetricLoss], eager[i].Valid[MetricLoss], eager[i].Valid[MetricLoss], 1e-6) != nil {
						t.Errorf("line %d: replay validated %v, eager %v", i+1, l.Valid, eager[i].Valid)
					}
				}
			}
		})
	}
}

// checkLines fails the test unless lines are at places, each validated,
// with its global step and an elapsed time that grows, and sum names the
// first best of them.
func checkLines(t *testing.T, lines []EpochStats, places [][2]int, steps int, sum *Summary) {
	t.Helper()
	if len(lines) != len(places) {
		t.Fatalf("%d metrics lines, want %d at %v", len(lines), len(places), places)
	}
	best := -1
	for i, l := range lines {
		if [2]int{l.Epoch, l.Step} != places[i] || l.Steps != steps || l.GlobalStep != (l.Epoch-1)*steps+l.Step {
			t.Errorf("line %d: epoch %d step %d of %d, global step %d; want epoch %d step %d", i+1, l.Epoch, l.Step, l.Steps, l.GlobalStep, places[i][0], places[i][1])
		}
		if l.Valid == nil || l.ElapsedS <= 0 || (i > 0 && l.ElapsedS <= lines[i-1].ElapsedS) || !(l.Loss > 0) {
			t.Errorf("line %d: valid %v, elapsed %gs (before %v), loss %g", i+1, l.Valid, l.ElapsedS, lines[max(i-1, 0)].ElapsedS, l.Loss)
		}
		if best < 0 || l.Valid[MetricAcc] > lines[best].Valid[MetricAcc] {
			best = i
		}
	}
	b := lines[best]
	wantStep := b.Step
	if !b.within() {
		wantStep = 0
	}
	if sum.BestEpoch != b.Epoch || sum.BestStep != wantStep || sum.BestValid[MetricAcc] != b.Valid[MetricAcc] {
		t.Errorf("summary: best %v at epoch %d step %d; the lines' best %v at epoch %d step %d",
			sum.BestValid, sum.BestEpoch, sum.BestStep, b.Valid, b.Epoch, b.Step)
	}
	if last := lines[len(lines)-1]; sum.Steps != last.GlobalStep || sum.ElapsedS < last.ElapsedS {
		t.Errorf("summary: %d steps in %gs; the last line is at step %d after %gs", sum.Steps, sum.ElapsedS, last.GlobalStep, last.ElapsedS)
	}
}

// TestEvalWithinDoesNotDisturbTraining: validating every 3 steps leaves
// every step's loss and every parameter and Adam moment bit for bit as
// without, in both drivers, on tiny and on the typed hetero-tiny (rsage).
func TestEvalWithinDoesNotDisturbTraining(t *testing.T) {
	tiny, hetero := tinyData(t), heteroTiny(t)
	tc, hc := tinyConfig(t), heteroConfig(t, "rsage")
	tc.Epochs, hc.Epochs = 2, 1
	for _, c := range []struct {
		name string
		ds   *dataset.Dataset
		cfg  Config
	}{{"tiny", tiny, tc}, {"hetero-tiny", hetero, hc}} {
		for _, replay := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/replay=%v", c.name, replay), func(t *testing.T) {
				_, wantLoss, wantParams, _ := loopRun(t, c.ds, c.cfg, replay)
				cfg := c.cfg
				cfg.EvalEverySteps = 3
				_, gotLoss, gotParams, dir := loopRun(t, c.ds, cfg, replay)
				steps := epochSteps(c.ds, cfg)
				if n, want := len(metricsLines(t, dir)), cfg.Epochs*((steps-1)/3+1); n != want || steps < 4 {
					t.Fatalf("%d metrics lines, want %d (%d steps an epoch)", n, want, steps)
				}
				sameRun(t, "validating within epochs", gotLoss, wantLoss, gotParams, wantParams)
			})
		}
	}
}

// TestPatienceCountsValidationsWithin: a model that cannot change (a rate
// far below float32's resolution of its weights) never improves, so with
// patience 2 and a validation every 2 steps the run stops at the third
// validation, within the first epoch, resumable where it stopped.
func TestPatienceCountsValidationsWithin(t *testing.T) {
	ds := tinyData(t)
	cfg := tinyConfig(t)
	cfg.LR, cfg.Patience, cfg.EvalEverySteps, cfg.Epochs = 1e-20, 2, 2, 3
	sum, _, _, dir := loopRun(t, ds, cfg, false)
	lines := metricsLines(t, dir)
	if len(lines) != 3 || lines[2].Epoch != 1 || lines[2].Step != 6 || sum.Steps != 6 || sum.Epochs != 0 {
		t.Fatalf("stopped after %d steps (%d epochs); lines %+v", sum.Steps, sum.Epochs, lines)
	}
	st, err := checkpoint.ReadState(filepath.Join(dir, checkpoint.LastCheckpoint))
	if err != nil || st.Epoch != 0 || st.StepInEpoch != 6 || st.SinceBest != 2 {
		t.Fatalf("last.ckpt %+v (%v), want epoch 0 step 6, 2 validations since the best", st, err)
	}
}

// TestTargetStopsTheRun: with a target of 0.45, validating every 2 steps,
// both drivers stop at the first validation that reaches it (within the
// first epoch on tiny) and report where and how long it took; the run is
// resumable there, to a higher target (its settings may change) and not
// with another evaluation schedule, and the resumed run ends as an
// uninterrupted one, its elapsed time carried on.
func TestTargetStopsTheRun(t *testing.T) {
	ds := tinyData(t)
	cfg := tinyConfig(t)
	cfg.Epochs, cfg.EvalEverySteps, cfg.TargetAcc = 2, 2, 0.45
	var dir string
	for _, replay := range []bool{true, false} {
		var sum *Summary
		sum, _, _, dir = loopRun(t, ds, cfg, replay)
		checkTargetStop(t, fmt.Sprintf("replay %v", replay), cfg, sum, dir, true)
	}
	resumeAfterTarget(t, ds, cfg, dir)
}

// checkTargetStop fails the test unless the run in dir, which ended with
// sum, stopped at the first validation that reached cfg's target (within
// an epoch, with within) and reported where, and how long it took, in
// its summary, its summary line and summary.json, and its last.ckpt is
// where it stopped; what names the run.
func checkTargetStop(t *testing.T, what string, cfg Config, sum *Summary, dir string, within bool) {
	t.Helper()
	lines := metricsLines(t, dir)
	hit := slices.IndexFunc(lines, func(l EpochStats) bool { return l.Valid[MetricAcc] >= cfg.TargetAcc })
	if hit < 0 || hit != len(lines)-1 || (within && !lines[hit].within()) {
		t.Fatalf("%s: lines %+v; want the run to stop at the first that reaches %g (within an epoch: %v)", what, lines, cfg.TargetAcc, within)
	}
	l := lines[hit]
	want := Position{Epoch: l.Epoch, Step: l.Step, GlobalStep: l.GlobalStep}
	if sum.TargetReached == nil || !*sum.TargetReached || sum.TargetReachedAt == nil || *sum.TargetReachedAt != want ||
		sum.TimeToTarget == nil || !(*sum.TimeToTarget > 0) || *sum.TimeToTarget > l.ElapsedS || sum.Steps != l.GlobalStep {
		t.Fatalf("%s: summary %+v; want the target reached at %+v within %gs", what, sum, want, l.ElapsedS)
	}
	if line := sum.Line(); !strings.Contains(line, fmt.Sprintf("target %g reached at epoch %d step %d after ", cfg.TargetAcc, l.Epoch, l.Step)) {
		t.Errorf("%s: summary line %q", what, line)
	}
	st, err := checkpoint.ReadState(filepath.Join(dir, checkpoint.LastCheckpoint))
	wantEpoch, wantStep := l.Epoch-1, l.Step
	if !l.within() {
		wantEpoch, wantStep = l.Epoch, 0
	}
	if err != nil || st.Epoch != wantEpoch || st.StepInEpoch != wantStep || !(st.Elapsed > 0) {
		t.Fatalf("%s: last.ckpt %+v (%v), want epoch %d step %d", what, st, err, wantEpoch, wantStep)
	}
	b, _ := os.ReadFile(filepath.Join(dir, checkpoint.SummaryFile))
	if !strings.Contains(string(b), `"time_to_target_s"`) || !strings.Contains(string(b), `"target_reached_at"`) {
		t.Errorf("%s: summary.json lacks the time to the target:\n%s", what, b)
	}
}

// resumeAfterTarget resumes the eager run in dir, which stopped at cfg's
// target, to a target it does not reach: another evaluation schedule is
// refused, a higher target is not, and the run then ends with the figures,
// lines and parameters of a run never stopped, later than it stopped.
func resumeAfterTarget(t *testing.T, ds *dataset.Dataset, cfg Config, dir string) {
	t.Helper()
	stopped, err := checkpoint.ReadState(filepath.Join(dir, checkpoint.LastCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	resume := func(c Config) (*Summary, [][]float32, error) {
		tr, err := New(cpu.New(2), ds, c, Options{RunDir: dir, Resume: true})
		if err != nil {
			return nil, nil, err
		}
		defer tr.Close()
		sum, err := tr.Run(context.Background())
		if err != nil {
			return nil, nil, err
		}
		return sum, params(t, tr), nil
	}
	other := cfg
	other.EvalEverySteps = 3
	if _, _, err := resume(other); err == nil || !strings.Contains(err.Error(), "eval_every_steps 3 (was 2)") {
		t.Fatalf("resumed with another schedule: %v", err)
	}
	higher := cfg
	higher.TargetAcc = 0.99
	got, gotParams, err := resume(higher)
	if err != nil {
		t.Fatal(err)
	}
	want, _, wantParams, whole := loopRun(t, ds, higher, false)
	sameRun(t, "resumed after the target", nil, nil, gotParams, wantParams)
	if *got.TargetReached || got.TimeToTarget != nil || !strings.Contains(got.Line(), "target 0.99 not reached after 2 epochs") {
		t.Errorf("resumed run: %q", got.Line())
	}
	if got.BestValid[MetricAcc] != want.BestValid[MetricAcc] || got.Steps != want.Steps || got.ElapsedS <= stopped.Elapsed {
		t.Errorf("resumed run %+v; uninterrupted %+v; stopped after %gs", got, want, stopped.Elapsed)
	}
	a, b := metricsLines(t, dir), metricsLines(t, whole)
	if len(a) != len(b) {
		t.Fatalf("resumed run: %d metrics lines, uninterrupted %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Epoch != b[i].Epoch || a[i].Step != b[i].Step || a[i].Valid[MetricAcc] != b[i].Valid[MetricAcc] {
			t.Errorf("line %d: resumed %+v, uninterrupted %+v", i+1, a[i], b[i])
		}
	}
}

// TestTargetNotReached: a run that does not reach its target ends well
// and says so, with no time to it.
func TestTargetNotReached(t *testing.T) {
	ds := tinyData(t)
	cfg := tinyConfig(t)
	cfg.Epochs, cfg.EvalEverySteps, cfg.TargetAcc = 2, 5, 0.99
	sum, _, _, dir := loopRun(t, ds, cfg, false)
	if n := len(metricsLines(t, dir)); n != 4 || sum.Epochs != 2 {
		t.Fatalf("%d epochs, %d metrics lines; want 2 epochs of 2 lines", sum.Epochs, n)
	}
	if sum.TargetReached == nil || *sum.TargetReached || sum.TimeToTarget != nil || sum.TargetReachedAt != nil {
		t.Fatalf("summary %+v: want the target not reached", sum)
	}
	if line := sum.Line(); !strings.Contains(line, "target 0.99 not reached after 2 epochs") {
		t.Errorf("summary line %q", line)
	}
	b, _ := os.ReadFile(filepath.Join(dir, checkpoint.SummaryFile))
	if !strings.Contains(string(b), `"target_reached": false`) || strings.Contains(string(b), "time_to_target_s") {
		t.Errorf("summary.json:\n%s", b)
	}
}

// TestScheduleSettingsRefused: wrong intervals and targets are refused,
// each naming its setting.
func TestScheduleSettingsRefused(t *testing.T) {
	for key, set := range map[string]func(*Config){
		"eval_every_steps":  func(c *Config) { c.EvalEverySteps = -1 },
		"eval_every_epochs": func(c *Config) { c.EvalEveryEpochs = 1.5 },
		"target_acc":        func(c *Config) { c.TargetAcc = 1.5 },
	} {
		c := Defaults()
		set(&c)
		var se *SettingError
		if err := c.Validate(); !errors.As(err, &se) || se.Key != key {
			t.Errorf("%s: %v, want a SettingError naming it", key, err)
		}
	}
	c := Defaults()
	c.EvalEverySteps, c.EvalEveryEpochs = 10, 0.05
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "give one of the two") {
		t.Errorf("both intervals: %v", err)
	}
}

// TestRepairKeepsValidationsWithin: a resumed run keeps the lines before
// its checkpoint, validations within epochs included, and drops the rest.
func TestRepairKeepsValidationsWithin(t *testing.T) {
	path := filepath.Join(t.TempDir(), checkpoint.MetricsFile)
	places := [][2]int{{1, 4}, {1, 8}, {1, 10}, {2, 4}, {2, 8}, {2, 10}, {3, 4}}
	var text strings.Builder
	for _, p := range places {
		fmt.Fprintf(&text, `{"epoch":%d,"steps":10,"step":%d}`+"\n", p[0], p[1])
	}
	for _, c := range []struct{ epochs, step, keep int }{{1, 4, 4}, {1, 0, 3}, {2, 0, 6}, {1, 9, 5}, {0, 8, 2}} {
		os.WriteFile(path, []byte(text.String()+`{"epoch":3,"st`), 0o644)
		if err := repairMetrics(path, c.epochs, c.step); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		if got := strings.Count(string(b), "\n"); got != c.keep || !strings.HasSuffix(string(b), "\n") {
			t.Errorf("after %d epochs and %d steps: kept %d lines, want %d:\n%s", c.epochs, c.step, got, c.keep, b)
		}
	}
}
