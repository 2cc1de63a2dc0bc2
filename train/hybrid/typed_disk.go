package hybrid

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/train"
)

// newTypedDisk makes type vt's disk store, ranked by order, without a
// host tier: BeforeCapture gives it its share of Options.HostMemory
// (SetHostRows) once the caches are sized.
func newTypedDisk(be backend.Backend, vt dataset.VertexType, order []int32, opt Options) (*featstore.Disk, error) {
	d, err := newDisk(be, vt.FeatureFile, order, 0, 0, opt) // no band: a typed graph's wide rows go at the link's bandwidth
	if err != nil {
		return nil, fmt.Errorf("type %s: %w", vt.Name, err)
	}
	return d, nil
}

// diskStores are the disk stores of the types that have one.
func diskStores(disks []*featstore.Disk) []*featstore.Disk {
	var out []*featstore.Disk
	for _, d := range disks {
		if d != nil {
			out = append(out, d)
		}
	}
	return out
}

// onDisk reports whether some type's features are on disk.
func (tt *typedTiers) onDisk() bool { return len(diskStores(tt.disks)) > 0 }

// splitHost shares Options.HostMemory (0: room for every row) among the
// disk stores of the types whose features are on disk, after their cached
// rows (cached, SplitCache's): first each store's staging and tables with
// an empty host tier (featstore.Disk.PlanHost), then the rest among their
// host tiers by SplitHost; a type whose staging holds its rows outside
// the cache anyway, or one whose last host rows take the staging's room,
// gets every row. It returns the host tiers' rows and their planned host
// memory, summed; a type in memory keeps its whole table there and takes
// none of it.
func (tt *typedTiers) splitHost(rowBytes, cached []int64) ([]int64, featstore.HostUse, error) {
	host, scores, full := make([]int64, len(tt.disks)), make([][]int64, len(tt.scores)), make([]featstore.HostUse, len(tt.disks))
	var none, all featstore.HostUse
	for i, d := range tt.disks {
		if d == nil {
			continue
		}
		lo, hi := d.PlanHost(int(cached[i]), 0), d.PlanHost(int(cached[i]), d.Rows())
		none, all, full[i] = none.Add(lo), all.Add(hi), hi
		if hi.Total() <= lo.Total() {
			host[i] = hi.HostRows
		} else {
			scores[i] = tt.scores[i]
		}
	}
	budget := tt.opt.HostMemory
	switch {
	case budget <= 0 || all.Total() <= budget:
		h, u := tt.planHost(cached, nil)
		return h, u, nil
	case none.Total() > budget:
		return nil, none, &HostMemoryError{Asked: budget, Need: none}
	}
	split := SplitHost(budget-none.Total(), rowBytes, scores, cached)
	for i, d := range tt.disks {
		if scores[i] != nil {
			host[i] = split[i]
			if full[i].Total() <= d.PlanHost(int(cached[i]), host[i]).Total() {
				host[i] = full[i].HostRows
			}
		}
	}
	h, u := tt.planHost(cached, host)
	return h, u, nil
}

// planHost is the disk stores' host tiers of host rows (nil: every row)
// beside cached rows, and their host memory summed.
func (tt *typedTiers) planHost(cached, host []int64) ([]int64, featstore.HostUse) {
	out := make([]int64, len(tt.disks))
	var sum featstore.HostUse
	for i, d := range tt.disks {
		if d == nil {
			continue
		}
		h := d.Rows()
		if host != nil {
			h = host[i]
		}
		u := d.PlanHost(int(cached[i]), h)
		out[i], sum = u.HostRows, sum.Add(u)
	}
	return out, sum
}

// reserveDisks sizes each disk store's gathers for its type's bottom
// rows at the trainer's conservative typed envelope (which the replay
// driver's tightened and grown plans and the evaluation's never exceed),
// and counts the tiers per epoch before each of ropt's runs.
func (tt *typedTiers) reserveDisks(tr *train.Trainer, ropt *train.ReplayOptions) error {
	if !tt.onDisk() {
		return nil
	}
	caps, err := tr.TypedEnvelope()
	if err != nil {
		return err
	}
	for i, d := range tt.disks {
		if d != nil {
			d.Reserve(max(caps[0].Types[i].Src, 1))
		}
	}
	tt.epochs = &epochs{read: func() (DiskTiers, error) { return sumTiers(diskStores(tt.disks)) }}
	tt.epochs.chain(ropt)
	return nil
}

// hostUse is the host memory the disk stores hold, summed.
func (tt *typedTiers) hostUse() featstore.HostUse {
	var sum featstore.HostUse
	for _, d := range diskStores(tt.disks) {
		sum = sum.Add(d.HostUse())
	}
	return sum
}

// finishDisks reads the disk stores' counters into Stats.Tiers (summed
// over the types) and closes the last epoch.
func (tt *typedTiers) finishDisks() error {
	if tt.epochs == nil {
		return nil
	}
	tiers, err := sumTiers(diskStores(tt.disks))
	if err != nil {
		return err
	}
	if err := tt.epochs.mark(tt.epochs.epoch + 1); err != nil {
		return err
	}
	tt.Stats.Tiers, tt.Stats.Epochs = &tiers, tt.epochs.out
	return nil
}
