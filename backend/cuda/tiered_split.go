package cuda

import "github.com/fanout-gnn/fanout/backend"

// SplitTiers sorts a gather's ids by tier and lists the positions read in
// place and those whose rows the host fetches (see backend.TieredGather):
// a thread a position, each warp taking its entries of a list with one
// atomic add. One launch.
func (b *Backend) SplitTiers(slot, ids backend.Buffer, n backend.Count, stageFrom int, cached, place, placeN, list, listN, stats backend.Buffer) {
	c, ck := b.checkSplitTiers(slot, ids, n, stageFrom, cached, place, placeN, list, listN, stats)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchSplitTiers(&ck, d1(c.blocks(int64(n.Cap), 256)), d1(256), 0)
}

// AwaitHost waits on the device for a value of mask in a word of host
// memory, then writes set there (see backend.TieredGather): one thread,
// acquire loads and a release store at system scope. One launch.
func (b *Backend) AwaitHost(flag backend.Buffer, mask, set int) {
	c, ck := b.checkAwaitHost(flag, mask, set)
	defer c.end()
	if !c.ok {
		return
	}
	c.launchAwaitHost(&ck, d1(1), d1(32), 0)
}

// GatherListed copies the rows a SplitTiers list names (see
// backend.TieredGather): a thread a word of a listed row, the tiered
// gather's choice of words, in one wave of blocks that loops (a list
// holds a few of its capacity's rows: the blocks past its count would only
// be scheduled to end). One launch.
func (b *Backend) GatherListed(host, stage backend.Buffer, dim int, list backend.Buffer, m backend.Count, out, stats backend.Buffer) {
	c, ck := b.checkGatherListed(host, stage, dim, list, m, out, stats)
	defer c.end()
	if !c.ok {
		return
	}
	kind, words := tieredKernel(dim, ck.host, ck.out, ck.stage)
	name := "listed_" + kind
	grid := min(c.blocks(int64(m.Cap)*int64(words), 256), uint32(c.residentBlocks(name, 256, 0)))
	c.launchListed(&ck, name, words, d1(grid), d1(256), 0)
}
