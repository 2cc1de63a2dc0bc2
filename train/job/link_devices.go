package job

import (
	"context"
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/train/link"
)

// runLinkDevices trains a link predictor data-parallel on j.Devices
// devices of this process (CPU devices joined in process, or GPUs joined
// by NCCL: openDevices), one trainer per device (link.NewShared) driven by
// link.RunGroup; rank 0 reports, saves and writes the outputs.
func runLinkDevices(ctx context.Context, j Job) (*link.Summary, error) {
	if j.Devices == AllDevices {
		n, err := j.allDevices()
		if err != nil {
			return nil, err
		}
		j.Devices = n
	}
	cfg, ds, err := linkGroupData(j, j.Devices)
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	bes, colls, mode, err := j.openDevices()
	if err != nil {
		return nil, err
	}
	defer closeGroup(bes, colls)
	printLinkStart(j.Log, cfg, fmt.Sprintf("%d devices (%s), %d edges a step", len(bes), groupName(bes), cfg.Batch), mode)
	trs := make([]*link.Trainer, len(bes))
	defer func() {
		for _, tr := range trs {
			if tr != nil {
				tr.Close()
			}
		}
	}()
	stores := make([]*featstore.Tiered, len(bes))
	for i := range bes {
		if trs[i], stores[i], err = newLinkRank(j, bes[i], ds, cfg, colls[i], mode == Hybrid); err != nil {
			return nil, fmt.Errorf("device %d: %w", i, err)
		}
		if j.Options.Resume { // every rank from the run directory; RunGroup leaves saving to rank 0
			trs[i].RunDir = j.Options.RunDir
			if err := trs[i].Resume(); err != nil {
				return nil, err
			}
		}
	}
	trs[0].RunDir = j.Options.RunDir
	trs[0].OnEpoch = func(st link.EpochStats) { fmt.Fprintln(j.Log, EpochLine(st)) }
	s, err := link.RunGroup(ctx, trs, mode.captures())
	if err != nil {
		return nil, err
	}
	for i, st := range stores {
		if st != nil {
			if err := printTierStats(j, st, fmt.Sprintf(" (device %d)", i)); err != nil {
				return nil, err
			}
		}
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

// runLinkProcess trains a link predictor as one process of a job started
// by a launcher (joinProcesses): one trainer over the job's collective;
// rank 0 reports, saves and writes the outputs.
func runLinkProcess(ctx context.Context, j Job) (*link.Summary, error) {
	l := j.Launch
	cfg, ds, err := linkGroupData(j, l.WorldSize)
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	var s *link.Summary
	err = joinProcesses(ctx, &j, func(ctx context.Context, be backend.Backend, coll backend.Collective, desc string, mode Mode) error {
		if j.Mode == Hybrid { // the launcher's join resolves the others
			mode, be = Hybrid, WithCapture(be)
		}
		tr, store, err := newLinkRank(j, be, ds, cfg, coll, mode == Hybrid)
		if err != nil {
			return err
		}
		defer tr.Close()
		if j.Options.Resume { // every rank reads the run directory; rank 0 alone saves
			tr.RunDir = j.Options.RunDir
			if err := tr.Resume(); err != nil {
				if l.Rank != 0 {
					err = fmt.Errorf("rank %d: %w (every rank of a resumed link job reads --out: on several hosts it must be on a shared file system)", l.Rank, err)
				}
				return err
			}
			tr.RunDir = ""
		}
		if l.Rank == 0 {
			printLinkStart(j.Log, cfg, fmt.Sprintf("%s, %d edges a step", desc, cfg.Batch), mode)
			tr.RunDir = j.Options.RunDir
			tr.OnEpoch = func(st link.EpochStats) { fmt.Fprintln(j.Log, EpochLine(st)) }
		}
		run := tr.Run
		if mode.captures() {
			run = tr.RunReplay
		}
		sum, err := run(ctx)
		if err == nil && store != nil {
			err = printTierStats(j, store, fmt.Sprintf(" (rank %d)", l.Rank))
		}
		if err != nil || l.Rank != 0 {
			return err
		}
		s = sum
		return writeLinkOutputs(tr, sum, j)
	})
	return s, err
}

// newLinkRank makes one rank's link trainer over group: with hybrid, over
// a tiered feature store of its own (newLinkHybrid), which it returns.
func newLinkRank(j Job, be backend.Backend, ds *dataset.Dataset, cfg link.Config, group backend.Collective, hybrid bool) (*link.Trainer, *featstore.Tiered, error) {
	if hybrid {
		return newLinkHybrid(j, be, ds, cfg, group)
	}
	tr, err := link.NewShared(be, ds, cfg, group)
	return tr, nil, err
}

// linkGroupData is a group's link settings for its ranks and its data.
func linkGroupData(j Job, ranks int) (link.Config, *dataset.Dataset, error) {
	cfg, err := linkConfig(j, ranks)
	if err != nil {
		return cfg, nil, err
	}
	ds, err := loadLinkData(j, cfg)
	return cfg, ds, err
}
