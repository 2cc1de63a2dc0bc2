package train

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/internal/atomicfile"
)

// metricsLog appends one JSON object per epoch, and one per validation
// within an epoch, to RunDir/metrics.jsonl.
type metricsLog struct {
	f *os.File
}

// openMetrics opens RunDir/metrics.jsonl, truncating it for a new run and
// appending when resuming. With no RunDir it writes nothing. A resumed
// file is first made to match last.ckpt (repairMetrics).
func openMetrics(runDir string, resume bool) (*metricsLog, error) {
	if runDir == "" {
		return &metricsLog{}, nil
	}
	path := filepath.Join(runDir, checkpoint.MetricsFile)
	flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if resume {
		flag = os.O_CREATE | os.O_WRONLY | os.O_APPEND
		st, err := checkpoint.ReadState(filepath.Join(runDir, checkpoint.LastCheckpoint))
		if err != nil {
			return nil, err
		}
		if err := repairMetrics(path, st.Epoch, st.StepInEpoch); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, err
	}
	return &metricsLog{f: f}, nil
}

// repairMetrics keeps the lines of the metrics file at path that a run
// resumed after `epochs` whole epochs and `step` steps of the next
// continues: the lines of those epochs, and of the next epoch its
// validations within its first step steps, in order. A run killed between
// a line and the checkpoint that covers it left a line the resumed run
// writes again; a line cut short by the kill, and what follows it, is
// dropped too. The file is rewritten (atomically) only when a line goes.
func repairMetrics(path string, epochs, step int) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", checkpoint.MetricsFile, err)
	}
	keep := 0
	last := [2]int{}
	for rest := b; len(rest) > 0; {
		line, tail, complete := bytes.Cut(rest, []byte("\n"))
		var st EpochStats
		if !complete || json.Unmarshal(line, &st) != nil {
			break
		}
		at := linePlace(st)
		if !after(at, last) || after(at, [2]int{epochs + 1, step}) {
			break
		}
		last, keep, rest = at, keep+len(line)+1, tail
	}
	if keep == len(b) {
		return nil
	}
	return atomicfile.Write(path, b[:keep])
}

// linePlace orders a metrics line within its run: its epoch, then its
// step, an epoch's own line (its end) after its validations within.
func linePlace(st EpochStats) [2]int {
	if st.within() {
		return [2]int{st.Epoch, st.Step}
	}
	return [2]int{st.Epoch, math.MaxInt}
}

// after says whether place a comes after place b.
func after(a, b [2]int) bool {
	return a[0] > b[0] || (a[0] == b[0] && a[1] > b[1])
}

// Write appends one epoch's record.
func (m *metricsLog) Write(st EpochStats) error {
	if m.f == nil {
		return nil
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if _, err := m.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("metrics.jsonl: %w", err)
	}
	return nil
}

// Close closes the file.
func (m *metricsLog) Close() error {
	if m.f == nil {
		return nil
	}
	return m.f.Close()
}
