package multigpu

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cuda"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
)

// openGPU returns a CUDA backend on device 0 and NCCL, or skips when there
// is no GPU. A GPU without NCCL fails: the group's tests would hide it.
func openGPU(t testing.TB) (*cuda.Backend, *cuda.NCCL) {
	t.Helper()
	be := traintest.GPU(t)
	n, err := cuda.LoadNCCL("")
	if err != nil {
		t.Fatalf("a GPU opened but NCCL (libnccl.so.2) did not load: %v", err)
	}
	return be, n
}

// openGPUs returns n GPUs (device 0 and the next ones) joined by NCCL,
// closed at the end of the test, or skips saying how many there are.
func openGPUs(t testing.TB, n int) ([]*cuda.Backend, []*cuda.Comm) {
	t.Helper()
	first, nccl := openGPU(t)
	have, err := cuda.DeviceCount(cuda.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if have < n {
		t.Skipf("needs %d GPUs joined by NCCL; this machine has %d", n, have)
	}
	gpus := []*cuda.Backend{first}
	for i := 1; i < n; i++ {
		be, err := cuda.New(cuda.Options{CacheDir: t.TempDir(), Deterministic: true, TF32x3: true, Device: i})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { be.Close() })
		gpus = append(gpus, be)
	}
	comms, err := nccl.NewComms(gpus)
	if err != nil {
		t.Fatal(err)
	}
	// Registered after the backends' closes, so run before them.
	t.Cleanup(func() {
		for _, c := range comms {
			c.Close()
		}
	})
	return gpus, comms
}

// gpuRanks are the ranks of gpus joined by comms; rank 0 appends every
// step's loss to losses.
func gpuRanks(gpus []*cuda.Backend, comms []*cuda.Comm, losses *[]float32) []Rank {
	ranks := make([]Rank, len(gpus))
	for i := range ranks {
		ranks[i] = Rank{Backend: gpus[i], Coll: comms[i]}
	}
	ranks[0].Options.OnStep = func(_, _ int, l float32) { *losses = append(*losses, l) }
	return ranks
}

// TestNCCLWorldSize1: NCCL loads, all-reduces at world size 1 (sum and
// max leave the values), and the group driver over one GPU with NCCL gives
// bitwise the losses of the one-GPU replay run (the share is n/n = 1 and the
// all-reduce of one rank is the identity).
func TestNCCLWorldSize1(t *testing.T) {
	be, nccl := openGPU(t)
	t.Logf("NCCL version %d", nccl.Version())
	comms, err := nccl.NewComms([]*cuda.Backend{be})
	if err != nil {
		t.Fatal(err)
	}
	defer comms[0].Close()
	f, _ := be.Upload([]float32{1.5, -2, 3})
	i, _ := be.Upload([]int32{4, -5, 6})
	comms[0].AllReduceSum(f)
	comms[0].AllReduceMax(i)
	fs, is := make([]float32, 3), make([]int32, 3)
	be.Read(fs, f, 0)
	be.Read(is, i, 0)
	if err := be.Sync(); err != nil {
		t.Fatal(err)
	}
	if fs[0] != 1.5 || fs[1] != -2 || fs[2] != 3 || is[0] != 4 || is[1] != -5 || is[2] != 6 {
		t.Fatalf("all-reduce of one rank changed the values: %v %v", fs, is)
	}

	ds, cfg := tiny(t)
	cfg.Epochs = 2
	var plain, group []float32
	tr, err := train.New(be, ds, cfg, train.Options{Mode: train.Replay, OnStep: func(_, _ int, l float32) { plain = append(plain, l) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tr.RunReplay(context.Background(), train.ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	tr.Close()
	ranks := []Rank{{Backend: be, Coll: comms[0], Options: train.Options{OnStep: func(_, _ int, l float32) { group = append(group, l) }}}}
	if _, err := Run(context.Background(), ds, cfg, ranks, train.Replay, train.ReplayOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(plain) != len(group) {
		t.Fatalf("%d steps alone, %d in the group", len(plain), len(group))
	}
	for s := range plain {
		if plain[s] != group[s] {
			t.Fatalf("step %d: loss %v in the group of one, %v alone", s, group[s], plain[s])
		}
	}
}

// TestGPUShardedFeatures: on two GPUs, the replay driver with the feature rows sharded as the topology
// (a GPU reading its peer's rows in place) gives bitwise the losses of
// every GPU holding the whole table, and the gathers count local rows (and
// remote rows with two GPUs).
func TestGPUShardedFeatures(t *testing.T) {
	gpus, comms := openGPUs(t, 2)
	n := len(gpus)
	ds, cfg := tiny(t)
	runWith := func(shard bool) ([]float32, *Features) {
		var losses []float32
		ranks := gpuRanks(gpus, comms, &losses)
		var f *Features
		if shard {
			topo, err := PlaceTopology(ds, ranks, 1<<16)
			if err != nil {
				t.Fatal(err)
			}
			if f, err = PlaceFeatures(ds, ranks, topo.Owner, topo.Replicated); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Run(context.Background(), ds, cfg, ranks, train.Replay, train.ReplayOptions{}); err != nil {
			t.Fatal(err)
		}
		return losses, f
	}
	whole, _ := runWith(false)
	sharded, f := runWith(true)
	defer f.Free()
	if len(whole) != len(sharded) {
		t.Fatalf("%d steps with the whole table, %d sharded", len(whole), len(sharded))
	}
	for s := range whole {
		if whole[s] != sharded[s] {
			t.Fatalf("%d GPUs, step %d: loss %v with sharded features, %v with the whole table", n, s, sharded[s], whole[s])
		}
	}
	reads, err := f.Reads()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d GPUs: rows gathered %+v; rows per device %v bytes", n, reads, f.RowBytes)
	if reads.Local == 0 || reads.Remote == 0 {
		t.Errorf("%d GPUs: rows gathered %+v", n, reads)
	}
}

// TestGPUExchangedFeatures: on two GPUs as two hosts, the replay driver with the
// feature rows fetched through the exchange ops and NCCL's all-to-all,
// captured with the step (the next step's fetch beside it),
// gives bitwise the losses of every GPU holding the whole table.
func TestGPUExchangedFeatures(t *testing.T) {
	exchangedMatchesWhole(t, true, train.ReplayOptions{})
}

// TestGPUExchangedFeaturesInOrder: the same with the next step's sampling
// and fetch issued after the step's work, on the one stream.
func TestGPUExchangedFeaturesInOrder(t *testing.T) {
	exchangedMatchesWhole(t, true, train.ReplayOptions{InOrder: true})
}

// TestGPUExchangedFeaturesEager: the same driven eagerly from the host.
func TestGPUExchangedFeaturesEager(t *testing.T) {
	exchangedMatchesWhole(t, false, train.ReplayOptions{})
}

func exchangedMatchesWhole(t *testing.T, replay bool, ropt train.ReplayOptions) {
	gpus, comms := openGPUs(t, 2)
	n := len(gpus)
	ds, cfg := tiny(t)
	runWith := func(exchange bool) ([]float32, *Exchange) {
		var losses []float32
		ranks := gpuRanks(gpus, comms, &losses)
		var x *Exchange
		if exchange {
			var err error
			if x, err = PlaceExchanged(ds, ranks, 1, featstore.HighestDegree(ds.Graph, 64), true); err != nil {
				t.Fatal(err)
			}
		}
		// A group whose collectives are out of step waits for ever: the
		// deadline aborts it and fails the test (tiny trains in seconds).
		if err := runDeadline(t, 45*time.Second, context.Background(), ds, cfg, ranks, replay, ropt); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d GPUs, exchange %v: %d steps", n, exchange, len(losses))
		return losses, x
	}
	whole, _ := runWith(false)
	got, x := runWith(true)
	if !slices.Equal(got, whole) {
		t.Fatalf("%d GPUs: losses with exchanged features differ from the whole table's\n%v\n%v", n, got, whole)
	}
	c, err := x.Counts()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d GPUs: %+v", n, c)
	if c.Own == 0 || c.Gathers == 0 || c.Other == 0 {
		t.Errorf("%d GPUs: counts %+v", n, c)
	}
}

// BenchmarkGPUStepCollectives times, on two GPUs, the collectives of one
// data-parallel step as the replay driver captures them (each rank
// replays a graph of them; ns/op is one step's): the overflow flag (I32
// [3], all-reduce max) and the gradients of products-sim's GraphSAGE
// (206,895 float32 values: 100 features, hidden 256, 47 classes), in one
// call or one per parameter (9) as before the arena, by NCCL or by the
// kernels reading peer memory (cuda.PeerGroup).
func BenchmarkGPUStepCollectives(b *testing.B) {
	gpus, comms := openGPUs(b, 2)
	sizes := []int{100 * 256, 100 * 256, 256, 256 * 256, 256 * 256, 256, 256 * 47, 256 * 47, 47} // per layer: w_self, w_neigh, bias
	total := 0
	for _, n := range sizes {
		total += n
	}
	peers := peerComms(b, comms)
	for _, c := range []struct {
		name              string
		flag, split, peer bool
	}{{"flag", true, false, false}, {"grads", false, false, false}, {"flag+grads", true, false, false}, {"flag+grads-per-param", true, true, false},
		{"grads-peer", false, false, true}, {"flag+grads-peer", true, false, true}} {
		b.Run(c.name, func(b *testing.B) {
			graphs := make([]backend.Replay, len(gpus))
			errs := make([]error, len(gpus))
			onEachGPU(len(gpus), func(r int) {
				var coll backend.Collective = comms[r]
				if c.peer {
					coll = peers[r]
				}
				graphs[r], errs[r] = captureCollectives(gpus[r], coll, c.flag, c.split, sizes, total)
			})
			for _, err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
			run := func(n int) {
				onEachGPU(len(gpus), func(r int) {
					for range n {
						graphs[r].Launch()
					}
					errs[r] = gpus[r].Sync()
				})
			}
			run(20) // warm up
			b.ResetTimer()
			run(b.N)
			b.StopTimer()
			for r, g := range graphs {
				if errs[r] != nil {
					b.Fatal(errs[r])
				}
				g.Close()
			}
		})
	}
}

// onEachGPU runs fn(r) for every rank r at once, each on its own goroutine
// locked to an OS thread (a CUDA context is current per thread).
func onEachGPU(n int, fn func(r int)) {
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			fn(r)
		}()
	}
	wg.Wait()
}

// captureCollectives captures one step's collectives on be.
func captureCollectives(be *cuda.Backend, c backend.Collective, flag, split bool, sizes []int, total int) (backend.Replay, error) {
	f, err := be.Alloc(backend.I32, 3)
	if err != nil {
		return nil, err
	}
	g, err := be.Alloc(backend.F32, total)
	if err != nil {
		return nil, err
	}
	// Warm up NCCL's paths outside the capture, as the driver's eager step does.
	c.AllReduceMax(f)
	c.AllReduceSum(g)
	if err := be.Sync(); err != nil {
		return nil, err
	}
	if err := be.BeginCapture(); err != nil {
		return nil, err
	}
	if flag {
		c.AllReduceMax(f)
	}
	if split {
		off := 0
		for _, n := range sizes {
			c.AllReduceSum(be.View(g, off, n))
			off += n
		}
	} else {
		c.AllReduceSum(g)
	}
	return be.EndCapture()
}
