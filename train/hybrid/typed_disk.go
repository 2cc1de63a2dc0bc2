package hybrid

import (
	"fmt"
	"strings"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/train"
)

// newTypedDisk makes type vt's disk store, ranked by order, without a
// host tier: BeforeCapture gives it its share of Options.HostMemory
// (SetHostRows) once the caches are sized.
func newTypedDisk(be backend.Backend, vt dataset.VertexType, order []int32, opt Options) (*featstore.Disk, error) {
	d, err := newDisk(be, vt.FeatureFile, order, 0, opt)
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
// host tiers of the types whose features are on disk, after their cached
// rows (cached, SplitCache's), by SplitHost; a type in memory keeps its
// whole table there and takes none of it.
func (tt *typedTiers) splitHost(rowBytes, cached []int64) []int64 {
	scores := make([][]int64, len(tt.scores))
	room := tt.opt.HostMemory
	for i, d := range tt.disks {
		if d != nil {
			scores[i] = tt.scores[i]
			if tt.opt.HostMemory <= 0 {
				room += d.Rows() * rowBytes[i]
			}
		}
	}
	return SplitHost(room, rowBytes, scores, cached)
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

// printDisks says, once the tiers are filled, each disk store's staging
// and the host memory of every disk tier.
func (tt *typedTiers) printDisks() {
	if tt.opt.Log == nil || !tt.onDisk() {
		return
	}
	var stage []string
	var bytes int64
	for i, d := range tt.disks {
		if d != nil {
			stage = append(stage, fmt.Sprintf("%s %d", tt.names[i], d.StageRows()))
			bytes += d.HostBytes()
		}
	}
	fmt.Fprintf(tt.opt.Log, "  disk tiers: staging for the rows of a step (%s), host memory of the host tiers and the gathers' tables %s\n",
		strings.Join(stage, ", "), mib(bytes))
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
