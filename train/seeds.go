package train

// epochSeeds returns this rank's items of an epoch, laid out so that step s
// takes seeds[s·batch : (s+1)·batch] (fewer at the end), and the number of
// steps of the epoch (the same on every rank). The shuffle is a pass of
// Philox over the training split (papers-sim: about 0.1 s on the host), so
// the last epoch asked for is kept (an envelope growth asks for it again)
// and the next one is shuffled in the background while the device trains.
// The slice returned is shared: callers do not modify it.
func (t *Trainer) epochSeeds(epoch int) (seeds []int32, steps int) {
	s := &t.seeds
	switch {
	case s.done != nil && s.epoch == epoch:
	case s.next != nil && s.nextEpoch == epoch:
		s.done, s.epoch = <-s.next, epoch
		s.next = nil
	default:
		s.wait() // a stale shuffle
		s.done, s.epoch = t.rankShare(epoch), epoch
	}
	if s.next == nil && epoch+1 < t.cfg.Epochs {
		next := make(chan []int32, 1)
		s.next, s.nextEpoch = next, epoch+1
		go func(e int) { next <- t.rankShare(e) }(epoch + 1)
	}
	return s.done, t.epochSteps()
}

// items is the number of the task's training items.
func (t *Trainer) items() int { return t.head.ItemCount() }

// epochSteps is the number of steps of an epoch: a whole pass over the
// training items, or Config.EpochSteps where that is fewer.
func (t *Trainer) epochSteps() int {
	n := (t.items() + t.cfg.Batch - 1) / t.cfg.Batch
	if t.cfg.EpochSteps > 0 {
		n = min(n, t.cfg.EpochSteps)
	}
	return n
}

// epochShuffle is the trainer's kept and prepared epoch seeds
// (epochSeeds).
type epochShuffle struct {
	epoch     int
	done      []int32 // epoch's seeds, or nil
	nextEpoch int
	next      chan []int32 // nextEpoch's seeds, being shuffled; nil when none is
}

// wait lets a shuffle in the background finish: it reads the dataset's
// training split, which may be memory that closing the dataset unmaps
// (Trainer.Close waits for it; a run stopped early leaves one behind).
func (s *epochShuffle) wait() {
	if s.next != nil {
		<-s.next
		s.next = nil
	}
}

// rankShare shuffles the training items for an epoch and takes this rank's
// share of every step. It reads only the trainer's configuration and
// dataset, so it may run beside the driver.
func (t *Trainer) rankShare(epoch int) []int32 {
	rank, size := t.rankSize()
	return RankShare(shuffleItems(t.head, t.cfg.Seed, epoch), t.cfg.Batch, rank, size)
}
