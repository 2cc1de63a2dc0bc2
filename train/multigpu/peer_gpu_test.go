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
			if _, err := Run(context.Background(), ds, cfg, ranks, replay, train.ReplayOptions{}); err != nil {
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
