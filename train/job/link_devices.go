package job

import (
	"context"
	"errors"
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/train/link"
)

// runLinkDevices trains a link predictor data-parallel on j.Devices
// devices of this process (CPU devices joined in process, or GPUs joined
// by NCCL: openDevices), one trainer per device (link.NewShared) driven by
// link.RunGroup; rank 0 reports, saves and writes the outputs.
func runLinkDevices(ctx context.Context, j Job) (*link.Summary, error) {
	if j.Options.Resume {
		return nil, errors.New("task link: --resume continues a run of one device for now")
	}
	if j.Devices == AllDevices {
		n, err := j.allDevices()
		if err != nil {
			return nil, err
		}
		j.Devices = n
	}
	cfg, err := linkConfig(j, j.Devices)
	if err != nil {
		return nil, err
	}
	ds, err := loadLinkData(j, cfg)
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	bes, colls, mode, err := j.openDevices()
	if err != nil {
		return nil, err
	}
	defer closeGroup(bes, colls)
	if mode == Hybrid {
		return nil, linkUnsupported("--mode hybrid (auto chose it: the data does not fit the devices)")
	}
	fmt.Fprintf(j.Log, "link predictor (%s, %s decoder, %d %s negatives per edge, exclude %s) on %d devices (%s), %d edges a step, %s\n",
		cfg.Model, cfg.Decoder, cfg.Negatives, cfg.NegativeDist, cfg.Exclude, len(bes), bes[0].Name(), cfg.Batch, mode)
	trs := make([]*link.Trainer, len(bes))
	defer func() {
		for _, tr := range trs {
			if tr != nil {
				tr.Close()
			}
		}
	}()
	for i := range bes {
		if trs[i], err = link.NewShared(bes[i], ds, cfg, colls[i]); err != nil {
			return nil, fmt.Errorf("device %d: %w", i, err)
		}
	}
	trs[0].RunDir = j.Options.RunDir
	trs[0].OnEpoch = func(st link.EpochStats) { fmt.Fprintln(j.Log, EpochLine(st)) }
	s, err := link.RunGroup(ctx, trs, mode == Replay)
	if err != nil {
		return nil, err
	}
	return s, writeLinkOutputs(trs[0], s, j)
}

// closeGroup closes a group's collectives and backends.
func closeGroup(bes []backend.Backend, colls []backend.Collective) {
	for i := range bes {
		colls[i].Close()
		CloseBackend(bes[i])
	}
}
