package multigpu

import (
	"context"
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

// peerSum is the CPU's sum of the ranks' values, added in rank order.
func peerSum(vals [][]float32) []float32 {
	out := slices.Clone(vals[0])
	for _, v := range vals[1:] {
		for i := range out {
			out[i] += v[i]
		}
	}
	return out
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
