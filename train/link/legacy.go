package link

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/internal/atomicfile"
	"github.com/fanout-gnn/fanout/train"
)

// The files of a link run written by versions that trained link
// prediction with a trainer of its own: the last epoch's checkpoint, the
// best model's weights, the settings and figures so far, and the summary.
// Today's runs use the trainer's layout for every task (last.ckpt,
// best.ckpt, metrics.jsonl, summary.json); MigrateRun turns the one into
// the other.
const (
	legacyLast    = "link_last.ckpt"
	legacyBest    = "link_best.ckpt"
	legacyState   = "link_state.json"
	legacySummary = "link_summary.json"
)

// legacyRun is legacyState's content. Its config is the trainer's
// settings (their JSON names) with the link settings beside them under
// their Go names.
type legacyRun struct {
	RawConfig json.RawMessage `json:"config"`
	Summary   *struct {
		Epochs []struct {
			Epoch    int            `json:"epoch"`
			Steps    int            `json:"steps"`
			Loss     float64        `json:"loss"`
			TrainAcc float64        `json:"train_acc"`
			Valid    *legacyMetrics `json:"valid,omitempty"`
			Seconds  float64        `json:"seconds"`
		} `json:"epochs"`
		BestEpoch int           `json:"best_epoch"`
		BestValid legacyMetrics `json:"best_valid"`
		Test      legacyMetrics `json:"test"`
	} `json:"summary"`
	SinceBest int `json:"evals_since_best"`
}

// legacyMetrics are a legacy run's figures.
type legacyMetrics struct {
	AUC  float64   `json:"auc"`
	AP   float64   `json:"ap"`
	MRR  float64   `json:"mrr"`
	Hits []float64 `json:"hits"`
}

func (m legacyMetrics) figures() train.Metrics {
	return Metrics{AUC: m.AUC, AP: m.AP, MRR: m.MRR, Hits: m.Hits}.Figures()
}

// HasLegacyRun reports whether dir holds a link run of an earlier version.
func HasLegacyRun(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, legacyState))
	return err == nil
}

// IsLegacyCheckpoint reports whether path is a checkpoint of a link run of
// an earlier version: a link_last.ckpt or link_best.ckpt beside its run's
// link_state.json.
func IsLegacyCheckpoint(path string) bool {
	base := filepath.Base(path)
	return (base == legacyLast || base == legacyBest) && HasLegacyRun(filepath.Dir(path))
}

// readLegacy reads dir's legacyState and the run's settings in today's
// form.
func readLegacy(dir string) (*legacyRun, train.Config, error) {
	path := filepath.Join(dir, legacyState)
	var st legacyRun
	var cfg train.Config
	js, err := os.ReadFile(path)
	if err != nil {
		return nil, cfg, err
	}
	if err := json.Unmarshal(js, &st); err != nil {
		return nil, cfg, fmt.Errorf("%s: %w", path, err)
	}
	var lc struct {
		Embed, Negatives, DecoderWidth, EvalNegatives, EvalEdges, EpochSteps int
		NegativeDist, Decoder, Exclude                                       string
	}
	if err := json.Unmarshal(st.RawConfig, &cfg); err != nil {
		return nil, cfg, fmt.Errorf("%s: config: %w", path, err)
	}
	if err := json.Unmarshal(st.RawConfig, &lc); err != nil {
		return nil, cfg, fmt.Errorf("%s: config: %w", path, err)
	}
	cfg.Task, cfg.EpochSteps = train.TaskLink, lc.EpochSteps
	cfg.Link = train.LinkConfig{Embed: lc.Embed, Negatives: lc.Negatives, NegativeDist: lc.NegativeDist, NegativeSharing: train.ShareNone, Decoder: lc.Decoder,
		DecoderWidth: lc.DecoderWidth, Exclude: lc.Exclude, EvalNegatives: lc.EvalNegatives, EvalEdges: lc.EvalEdges}
	if err := cfg.Validate(); err != nil {
		return nil, cfg, fmt.Errorf("%s: %w", path, err)
	}
	return &st, cfg, nil
}

// LoadLegacy reads a link checkpoint of an earlier version (its settings
// from the link_state.json beside it) as today's.
func LoadLegacy(path string) (*train.Saved, error) {
	_, cfg, err := readLegacy(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	c, err := checkpoint.Load(path)
	if err != nil {
		return nil, err
	}
	if c.Config, err = json.Marshal(cfg); err != nil {
		return nil, err
	}
	return train.DecodeSaved(path, c)
}

// MigrateRun turns a link run of an earlier version in dir into today's
// layout, so that the trainer resumes it: last.ckpt and best.ckpt with the
// run's settings and figures, metrics.jsonl from its epochs. Each file is
// written atomically before the legacy files go, so a run stopped midway
// migrates again.
func MigrateRun(dir string) error {
	st, cfg, err := readLegacy(dir)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	var best, test []byte
	var lines bytes.Buffer
	if s := st.Summary; s != nil {
		if s.BestEpoch > 0 {
			if best, err = json.Marshal(s.BestValid.figures()); err != nil {
				return err
			}
			if test, err = json.Marshal(s.Test.figures()); err != nil {
				return err
			}
		}
		for _, e := range s.Epochs {
			es := train.EpochStats{Epoch: e.Epoch, Steps: e.Steps, Loss: e.Loss, TrainAcc: e.TrainAcc, Seconds: e.Seconds}
			if e.Valid != nil {
				es.Valid = e.Valid.figures()
			}
			b, err := json.Marshal(es)
			if err != nil {
				return err
			}
			lines.Write(append(b, '\n'))
		}
	}
	for _, f := range []struct{ from, to string }{{legacyLast, checkpoint.LastCheckpoint}, {legacyBest, checkpoint.BestCheckpoint}} {
		c, err := checkpoint.Load(filepath.Join(dir, f.from))
		if errors.Is(err, os.ErrNotExist) && f.from == legacyBest {
			continue
		}
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		c.Config, c.State.BestMetrics, c.State.TestMetrics = js, best, test
		c.State.SinceBest = st.SinceBest
		if err := c.Save(filepath.Join(dir, f.to)); err != nil {
			return err
		}
	}
	if err := atomicfile.Write(filepath.Join(dir, checkpoint.MetricsFile), lines.Bytes()); err != nil {
		return err
	}
	return RemoveLegacyRun(dir)
}

// RemoveLegacyRun removes the files of a link run of an earlier version
// from dir.
func RemoveLegacyRun(dir string) error {
	for _, f := range []string{legacyState, legacyLast, legacyBest, legacySummary} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
