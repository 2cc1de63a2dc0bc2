package train

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// metricsLog appends one JSON object per epoch to RunDir/metrics.jsonl.
type metricsLog struct {
	f *os.File
}

// openMetrics opens RunDir/metrics.jsonl, truncating it for a new run and
// appending when resuming. With no RunDir it writes nothing.
func openMetrics(runDir string, resume bool) (*metricsLog, error) {
	if runDir == "" {
		return &metricsLog{}, nil
	}
	flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if resume {
		flag = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(filepath.Join(runDir, MetricsFile), flag, 0o644)
	if err != nil {
		return nil, err
	}
	return &metricsLog{f: f}, nil
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
