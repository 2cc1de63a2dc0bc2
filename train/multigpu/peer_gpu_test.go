package multigpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/train"
)

// peerComms joins comms over peer memory, closed at the end of the test
// (before the backends).
func peerComms(t testing.TB, comms []*cuda.Comm) []*cuda.PeerComm {
	t.Helper()
	pcs, err := cuda.NewPeerGroup(comms)
	if err != nil {
		t.Fatalf("peer group over %d GPUs: %v", len(comms), err)
	}
	t.Cleanup(func() {
		for _, p := range pcs {
			p.Close()
		}
	})
	return pcs
}

// peerSum is the CPU's sum of the ranks' values, added in rank order as
// the peer-memory kernel adds them (kernels/peerreduce.cu: its slot's
// entries from rank 0 up, a rank's own buffer standing in for its
// entry).
func peerSum(vals [][]float32) []float32 {
	order := make([]int, len(vals))
	for r := range order {
		order[r] = r
	}
	return foldSum(vals, order)
}

// TestGPUPeerAllReduce: on two GPUs, AllReduceSum over peer memory gives
// every rank the CPU's rank-order sum bit for bit: issued eagerly, for
// buffers of odd and tiny lengths in turn (each call a round of the
// kernels' barrier), and captured in a graph replayed several times (the
// round advanced on the device). Ranks passing different lengths fail
// with an error naming both, instead of hanging.
func TestGPUPeerAllReduce(t *testing.T) {
	gpus, comms := openGPUs(t, 2)
	pcs := peerComms(t, comms)
	n := len(gpus)
	lengths := []int{100_003, 7, 1, 206_895}
	vals := make([][][]float32, len(lengths)) // [call][rank]
	for k, m := range lengths {
		for r := range n {
			rng := rand.New(rand.NewPCG(uint64(k), uint64(r)))
			v := make([]float32, m)
			for i := range v {
				v[i] = rng.Float32()*2 - 1
			}
			vals[k] = append(vals[k], v)
		}
	}
	got := make([][][]float32, n)
	errs := make([]error, n)
	onEachGPU(n, func(r int) {
		for k := range lengths {
			buf, err := gpus[r].Upload(vals[k][r])
			if err != nil {
				errs[r] = err
				return
			}
			pcs[r].AllReduceSum(buf)
			out := make([]float32, lengths[k])
			gpus[r].Read(out, buf, 0)
			if errs[r] = gpus[r].Sync(); errs[r] != nil {
				return
			}
			got[r] = append(got[r], out)
			gpus[r].Free(buf)
		}
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	for k := range lengths {
		want := peerSum(vals[k])
		for r := range n {
			if !slices.Equal(got[r][k], want) {
				t.Fatalf("call %d (%d values), rank %d: the sum differs from the CPU's", k, lengths[k], r)
			}
		}
	}

	// Captured: every replay sums the buffers again.
	const replays = 3
	m := 50_001
	graphs := make([]backend.Replay, n)
	bufs := make([]backend.Buffer, n)
	onEachGPU(n, func(r int) {
		if bufs[r], errs[r] = gpus[r].Upload(vals[0][r][:m]); errs[r] != nil {
			return
		}
		if errs[r] = gpus[r].BeginCapture(); errs[r] != nil {
			return
		}
		pcs[r].AllReduceSum(bufs[r])
		if graphs[r], errs[r] = gpus[r].EndCapture(); errs[r] != nil {
			return
		}
		for range replays {
			graphs[r].Launch()
		}
		errs[r] = gpus[r].Sync()
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d, captured: %v", r, err)
		}
	}
	want := make([][]float32, n)
	for r := range n {
		want[r] = vals[0][r][:m]
	}
	for range replays {
		s := peerSum(want)
		for r := range n {
			want[r] = s
		}
	}
	for r := range n {
		out := make([]float32, m)
		gpus[r].Read(out, bufs[r], 0)
		if err := gpus[r].Sync(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out, want[0]) {
			t.Fatalf("rank %d: after %d replays the buffer is not the CPU's repeated sum", r, replays)
		}
		graphs[r].Close()
		gpus[r].Free(bufs[r])
	}

	// Different lengths: an error on every rank, nothing launched.
	onEachGPU(n, func(r int) {
		buf, err := gpus[r].Alloc(backend.F32, 10+r)
		if err != nil {
			errs[r] = err
			return
		}
		pcs[r].AllReduceSum(buf)
		errs[r] = gpus[r].Sync()
	})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "the ranks' calls differ") {
			t.Fatalf("rank %d: lengths 10 and 11 summed: %v", r, err)
		}
	}
}

// foldSum is the float32 sum of the ranks' values added in the given
// order of ranks, left to right, element by element.
func foldSum(vals [][]float32, order []int) []float32 {
	out := slices.Clone(vals[order[0]])
	for _, r := range order[1:] {
		for i := range out {
			out[i] += vals[r][i]
		}
	}
	return out
}

// treeSum is the float32 sum of the ranks' values added in pairs, then
// pairs of pairs (a reduction tree, as a collective library may add).
func treeSum(vals [][]float32) []float32 {
	level := vals
	for len(level) > 1 {
		var next [][]float32
		for i := 0; i+1 < len(level); i += 2 {
			next = append(next, foldSum(level[i:i+2], []int{0, 1}))
		}
		if len(level)%2 == 1 {
			next = append(next, level[len(level)-1])
		}
		level = next
	}
	return level[0]
}

// orderedValues are m values per rank for n ranks whose sum in rank
// order differs in its bits from a sum in other orders: random signs
// and magnitudes from 2^-20 to 2^5, so that the roundings of a float32
// sum depend on the order its terms are added in.
func orderedValues(n, m int) [][]float32 {
	vals := make([][]float32, n)
	for r := range vals {
		rng := rand.New(rand.NewPCG(11, uint64(r)))
		for range m {
			v := float32(math.Ldexp(1+rng.Float64(), rng.IntN(26)-20))
			if rng.IntN(2) == 0 {
				v = -v
			}
			vals[r] = append(vals[r], v)
		}
	}
	return vals
}

// otherOrders are orders of n ranks whose sums are not the rank order's
// for every input: every rotation (a rank starting from its own buffer),
// the reverse, the last two swapped, and from 4 ranks on a reduction
// tree (nil; with 3 ranks the tree adds as the rank order does).
func otherOrders(n int) [][]int {
	var out [][]int
	ranks := make([]int, n)
	for i := range ranks {
		ranks[i] = i
	}
	for r := 1; r < n; r++ {
		out = append(out, append(slices.Clone(ranks[r:]), ranks[:r]...))
	}
	rev := slices.Clone(ranks)
	slices.Reverse(rev)
	swap := slices.Clone(ranks)
	swap[n-2], swap[n-1] = swap[n-1], swap[n-2]
	out = append(out, rev, swap)
	if n >= 4 {
		out = append(out, nil)
	}
	return out
}

// TestPeerSumOrderVisible: for 3 to 8 ranks, the values the GPU tests
// sum give other bits in at least one value in twenty when added in any
// of otherOrders than in rank order (peerSum), so a kernel that adds in
// another order fails them; with two ranks no order can be seen
// (a + b = b + a).
func TestPeerSumOrderVisible(t *testing.T) {
	for n := 3; n <= 8; n++ {
		vals := orderedValues(n, 4099)
		want := peerSum(vals)
		for _, order := range otherOrders(n) {
			got := treeSum(vals)
			if order != nil {
				got = foldSum(vals, order)
			}
			differ := 0
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					differ++
				}
			}
			if differ < len(want)/20 { // measured: 568 of 4099 at least
				t.Errorf("%d ranks: the sum in order %v (nil: a tree) differs from the rank order's in %d of %d values: the GPU tests could barely see the order", n, order, differ, len(want))
			}
		}
	}
	two := orderedValues(2, 4099)
	if !slices.Equal(foldSum(two, []int{1, 0}), peerSum(two)) {
		t.Errorf("two ranks: b + a differs from a + b")
	}
}

// TestGPUPeerAllReduceRanks: on 3, 4 and 8 GPUs, AllReduceSum over peer
// memory gives every rank the CPU's rank-order sum bit for bit, for
// values whose sum in another order has other bits
// (TestPeerSumOrderVisible), at a length with a tail of single floats.
func TestGPUPeerAllReduceRanks(t *testing.T) {
	for _, n := range []int{3, 4, 8} {
		t.Run(fmt.Sprintf("%d GPUs", n), func(t *testing.T) {
			gpus, comms := openGPUs(t, n)
			pcs := peerComms(t, comms)
			vals := orderedValues(n, 4099)
			got := make([][]float32, n)
			errs := make([]error, n)
			onEachGPU(n, func(r int) {
				buf, err := gpus[r].Upload(vals[r])
				if err != nil {
					errs[r] = err
					return
				}
				pcs[r].AllReduceSum(buf)
				got[r] = make([]float32, len(vals[r]))
				gpus[r].Read(got[r], buf, 0)
				errs[r] = gpus[r].Sync()
				gpus[r].Free(buf)
			})
			want := peerSum(vals)
			for r := range n {
				if errs[r] != nil {
					t.Fatalf("rank %d: %v", r, errs[r])
				}
				if !slices.Equal(got[r], want) {
					t.Fatalf("rank %d of %d: the sum differs from the CPU's rank-order sum", r, n)
				}
			}
		})
	}
}

// TestGPUPeerSumTrainsAsNCCL: two GPUs training with the gradients summed
// over peer memory give bitwise the losses of NCCL's all-reduce (two
// ranks' sums are one addition either way), in replay and in eager mode.
func TestGPUPeerSumTrainsAsNCCL(t *testing.T) {
	gpus, comms := openGPUs(t, 2)
	pcs := peerComms(t, comms)
	ds, cfg := tiny(t)
	cfg.Epochs = 2
	for _, replay := range []bool{true, false} {
		runWith := func(peer bool) []float32 {
			var losses []float32
			ranks := gpuRanks(gpus, comms, &losses)
			if peer {
				for r := range ranks {
					ranks[r].Coll = pcs[r]
				}
			}
			if _, err := Run(context.Background(), ds, cfg, ranks, modeOf(replay), train.ReplayOptions{}); err != nil {
				t.Fatalf("replay %v, peer sum %v: %v", replay, peer, err)
			}
			return losses
		}
		nccl, peer := runWith(false), runWith(true)
		if len(nccl) == 0 || len(nccl) != len(peer) {
			t.Fatalf("replay %v: %d steps with NCCL, %d with the peer sum", replay, len(nccl), len(peer))
		}
		for s := range nccl {
			if nccl[s] != peer[s] {
				t.Fatalf("replay %v, step %d: loss %v with the peer sum, %v with NCCL", replay, s, peer[s], nccl[s])
			}
		}
	}
}

// TestGPUPeerSumMax: on two GPUs, AllReduceSumMax gives every rank the
// CPU's rank-order sum and the element-wise maximum of the ranks' flag
// words, round after round (the flags travel in the alternating slots
// too), eagerly and replayed; and ranks passing different numbers of flag
// words fail instead of hanging.
func TestGPUPeerSumMax(t *testing.T) {
	gpus, comms := openGPUs(t, 2)
	pcs := peerComms(t, comms)
	n := len(gpus)
	const m = 4099
	flagsOf := func(k, r int) []int32 { return []int32{int32(10*k + r), int32(-r), int32(5 * (1 - r)), int32(k)} }
	vals := make([][]float32, n)
	for r := range n {
		rng := rand.New(rand.NewPCG(7, uint64(r)))
		for range m {
			vals[r] = append(vals[r], rng.Float32()*2-1)
		}
	}
	const rounds = 3
	got := make([][][]float32, n)
	gotFlags := make([][][]int32, n)
	errs := make([]error, n)
	onEachGPU(n, func(r int) {
		for k := range rounds {
			buf, err := gpus[r].Upload(vals[r])
			if err != nil {
				errs[r] = err
				return
			}
			flag, err := gpus[r].Upload(flagsOf(k, r))
			if err != nil {
				errs[r] = err
				return
			}
			pcs[r].AllReduceSumMax(buf, flag)
			out, f := make([]float32, m), make([]int32, 4)
			gpus[r].Read(out, buf, 0)
			gpus[r].Read(f, flag, 0)
			if errs[r] = gpus[r].Sync(); errs[r] != nil {
				return
			}
			got[r], gotFlags[r] = append(got[r], out), append(gotFlags[r], f)
			gpus[r].Free(buf)
			gpus[r].Free(flag)
		}
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	want := peerSum(vals)
	for k := range rounds {
		wantFlags := flagsOf(k, 0)
		for i, v := range flagsOf(k, 1) {
			wantFlags[i] = max(wantFlags[i], v)
		}
		for r := range n {
			if !slices.Equal(got[r][k], want) {
				t.Fatalf("round %d, rank %d: the sum differs from the CPU's", k, r)
			}
			if !slices.Equal(gotFlags[r][k], wantFlags) {
				t.Fatalf("round %d, rank %d: flags %v, want %v", k, r, gotFlags[r][k], wantFlags)
			}
		}
	}

	// Captured and replayed: a rank's flag raised before the second launch
	// reaches every rank's flag in that launch.
	graphs := make([]backend.Replay, n)
	bufs, flags := make([]backend.Buffer, n), make([]backend.Buffer, n)
	onEachGPU(n, func(r int) {
		if bufs[r], errs[r] = gpus[r].Upload(make([]float32, m)); errs[r] != nil {
			return
		}
		if flags[r], errs[r] = gpus[r].Upload([]int32{0, 0, 0}); errs[r] != nil {
			return
		}
		if errs[r] = gpus[r].BeginCapture(); errs[r] != nil {
			return
		}
		pcs[r].AllReduceSumMax(bufs[r], flags[r])
		if graphs[r], errs[r] = gpus[r].EndCapture(); errs[r] != nil {
			return
		}
		graphs[r].Launch()
		if r == 1 {
			gpus[r].Write(flags[r], 0, []int32{1, 3, 7})
		}
		graphs[r].Launch()
		errs[r] = gpus[r].Sync()
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d, captured: %v", r, err)
		}
	}
	for r := range n {
		f := make([]int32, 3)
		gpus[r].Read(f, flags[r], 0)
		if err := gpus[r].Sync(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(f, []int32{1, 3, 7}) {
			t.Fatalf("rank %d: replayed flags %v, want [1 3 7]", r, f)
		}
		graphs[r].Close()
		gpus[r].Free(bufs[r])
		gpus[r].Free(flags[r])
	}

	// Different numbers of flag words: an error on every rank.
	onEachGPU(n, func(r int) {
		buf, err := gpus[r].Alloc(backend.F32, 8)
		if err != nil {
			errs[r] = err
			return
		}
		flag, err := gpus[r].Alloc(backend.I32, 2+r)
		if err != nil {
			errs[r] = err
			return
		}
		pcs[r].AllReduceSumMax(buf, flag)
		errs[r] = gpus[r].Sync()
	})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "the ranks' calls differ") {
			t.Fatalf("rank %d: 2 and 3 flag words: %v", r, err)
		}
	}
}
