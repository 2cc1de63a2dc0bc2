package link

import (
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/internal/traintest"
)

// BenchmarkDeviceEval times a link evaluation at ogbl-citation2's
// protocol: 10,000 held-out edges, each ranked against 1,000 negatives
// drawn at evaluation, embeddings 256 wide, the dot decoder. "rank" is
// scoreDevice from every vertex's embedding already in backend memory
// (laying the set out, scoring, ranking, reading scores and counts
// back); "evaluate" is the whole of Evaluate, embedding the 50,000
// vertices of the graph too. On the CPU backend, and on a GPU (skipped
// without one): go test -c, then link.test -test.run '^$' -test.bench
// DeviceEval/cuda on the GPU's machine.
func BenchmarkDeviceEval(b *testing.B) {
	ds := ringData(b, 50000)
	cfg := ringConfig()
	cfg.Hidden, cfg.Link.Embed, cfg.Batch = 256, 256, 1024
	cfg.Link.Decoder, cfg.Link.DecoderWidth = train.DecoderDot, 0
	cfg.Link.EvalNegatives, cfg.Link.EvalEdges = 1000, 10000
	for _, dev := range []struct {
		name string
		be   func(testing.TB) backend.Backend
	}{
		{"cpu", func(testing.TB) backend.Backend { return cpu.New(0) }},
		{"cuda", func(t testing.TB) backend.Backend { return traintest.GPU(t) }},
	} {
		b.Run(dev.name+"/rank", func(b *testing.B) {
			tr, h := benchTrainer(b, dev.be(b), ds, cfg)
			tab, err := tr.OutputTable()
			if err != nil {
				b.Fatal(err)
			}
			defer h.be.Free(tab)
			for b.Loop() {
				if _, err := h.scoreDevice(b.Context(), tab, train.Valid); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(dev.name+"/evaluate", func(b *testing.B) {
			_, h := benchTrainer(b, dev.be(b), ds, cfg)
			for b.Loop() {
				if _, err := h.Evaluate(b.Context(), train.Valid); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchTrainer is a link trainer of cfg on ds (closed at the end of the
// benchmark) whose validation set is drawn already: a run draws it once.
func benchTrainer(b *testing.B, be backend.Backend, ds *dataset.Dataset, cfg train.Config) (*train.Trainer, *head) {
	tr, err := train.New(be, ds, cfg, train.Options{Task: Task{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(tr.Close)
	h, err := headOf(tr)
	if err == nil {
		_, err = h.evalSet(train.Valid)
	}
	if err != nil {
		b.Fatal(err)
	}
	return tr, h
}
