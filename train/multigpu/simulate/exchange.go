package simulate

import (
	"math"

	"github.com/fanout-gnn/fanout/featstore"
)

// observedSteps is how many batches the replay driver observes to size its
// envelope and chunks (train's observeSizes).
const observedSteps = 16

// exchangeStep gathers every rank's rows of st through all-to-alls with
// chunks of chunk rows per peer and returns the chunks after the step.
// With eager chunks a gather that asked a peer for more rows than a chunk
// holds (agreed over the ranks) grows the chunks and every rank gathers
// again, as train's gatherFits does; every gather is counted in the
// totals, as the devices count them. Replay chunks are not limited here
// (replayChunks sizes them afterwards).
func (s *sim) exchangeStep(st *Step, chunk int, acc []featstore.ExchangeCounts) int {
	for {
		s.forRanks(func(w *worker, r int) { s.exchangeGather(w, r, chunk, &st.Ranks[r], &acc[r]) })
		st.Gathers++
		st.Chunk = chunk
		need := 0
		for _, rs := range st.Ranks {
			need = max(need, rs.Need)
		}
		if s.cfg.Chunks != EagerChunks || chunk >= s.cap || need <= chunk {
			return chunk
		}
		chunk = max(chunk+1, int(math.Ceil(float64(need)*s.cfg.Margin)))
	}
}

// exchangeGather is rank r's gather as featstore.Exchanged issues it
// (backend.Exchanger's ExchangeAsk and ExchangeTake): rows held (own or
// replicated), rows kept by the gather before (reuse), and the others
// asked of their holders, in order, a chunk of at most chunk rows per
// peer; a row past its chunk is counted as overflow and not kept. The
// rows the gather got, and those it reused, are kept for the next.
func (s *sim) exchangeGather(w *worker, r, chunk int, rs *RankStep, acc *featstore.ExchangeCounts) {
	st := &s.state[r]
	var stamp uint32
	if s.cfg.Reuse {
		stamp = w.markKept(st.kept)
	}
	clear(w.asks)
	kept := st.kept[:0]
	rs.Rows, rs.Need = Rows{}, 0
	host := r / s.cfg.Devices
	var overflow int64
	for _, v := range st.ids {
		p := int(s.pl.rowOwner[v])
		switch {
		case p == r:
			rs.Rows.Local++
			continue
		case s.pl.rowReplica[v]:
			rs.Rows.Replica++
			continue
		case s.cfg.Reuse && w.mark[v] == stamp:
			rs.Rows.Reused++
			kept = append(kept, v)
			continue
		case p/s.cfg.Devices == host:
			rs.Rows.SameHost++
		default:
			rs.Rows.OtherHost++
		}
		k := w.asks[p]
		w.asks[p]++
		rs.Need = max(rs.Need, k+1)
		if k >= chunk {
			overflow++
			continue
		}
		if s.cfg.Reuse {
			kept = append(kept, v)
		}
	}
	st.kept = kept
	acc.Own += rs.Rows.Local + rs.Rows.Replica
	acc.Host += rs.Rows.SameHost
	acc.Other += rs.Rows.OtherHost
	acc.Reused += rs.Rows.Reused
	acc.Overflow += overflow
	acc.Gathers++
	acc.ChunkRows += int64(chunk)
}

// exchangeTotals adds the ranks' counters as multigpu.Exchange.Counts
// does.
func (s *sim) exchangeTotals(acc []featstore.ExchangeCounts, dim int) featstore.ExchangeCounts {
	var sum featstore.ExchangeCounts
	hostPeers := int64(s.cfg.Devices - 1)
	for _, c := range acc {
		c.RowBytes, c.Ranks = 4+4*int64(dim), 1
		c.HostPeers, c.OtherPeers = hostPeers, int64(s.cfg.Ranks())-1-hostPeers
		sum = sum.Plus(c)
	}
	return sum
}

// replayChunks sizes the chunks of res's steps as the replay driver does:
// the most rows one of the first observed batches after the first asks of
// one peer, over the ranks, times the margin; a later step (after the
// first) that asks more grows them to its need times the margin (the
// driver flags it, grows, captures again and runs it again: two gathers).
// The totals' chunk rows follow.
func replayChunks(res *Result) {
	m := min(observedSteps, res.EpochSteps, len(res.Steps))
	obs := 0
	for k := range m {
		if k > 0 || m == 1 {
			obs = max(obs, stepNeed(&res.Steps[k]))
		}
	}
	margin := res.Config.Margin
	chunk := max(1, int(math.Ceil(float64(obs)*margin)))
	var rows, gathers int64
	for k := range res.Steps {
		st := &res.Steps[k]
		st.Gathers = 1
		// The run's first step is not grown for: the replay driver's
		// warm-up gathers its batch eagerly before the capture, and the
		// captured gather then finds those rows kept.
		if need := stepNeed(st); k > 0 && need > chunk {
			chunk = max(chunk+1, int(math.Ceil(float64(need)*margin)))
			st.Gathers = 2
		}
		st.Chunk = chunk
		rows += int64(chunk) * int64(st.Gathers)
		gathers += int64(st.Gathers)
	}
	ranks := int64(res.Config.Ranks())
	res.Totals.Exchange.ChunkRows = rows * ranks
	res.Totals.Exchange.Gathers = gathers
}

// stepNeed is the most rows any rank asked of one peer in st.
func stepNeed(st *Step) int {
	need := 0
	for _, rs := range st.Ranks {
		need = max(need, rs.Need)
	}
	return need
}
