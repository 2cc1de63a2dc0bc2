package link

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train"
)

// EpochStats are one epoch's figures.
type EpochStats struct {
	Epoch    int      `json:"epoch"` // 1-based
	Steps    int      `json:"steps"`
	Loss     float64  `json:"loss"`      // mean over the epoch's steps
	TrainAcc float64  `json:"train_acc"` // pairs on their label's side of 0
	Valid    *Metrics `json:"valid,omitempty"`
	Seconds  float64  `json:"seconds"`
}

// Summary is a run's result: every epoch, and the test metrics of the
// model with the best validation ROC-AUC (the last one without
// validation edges).
type Summary struct {
	Epochs    []EpochStats `json:"epochs"`
	BestEpoch int          `json:"best_epoch"`
	BestValid Metrics      `json:"best_valid"`
	Test      Metrics      `json:"test"`
}

// Run trains every epoch with the eager driver: the host issues each step
// and reads its loss.
func (t *Trainer) Run(ctx context.Context) (*Summary, error) {
	return t.run(ctx, func() error {
		t.issueStep()
		var l [1]float32
		t.be.Read(l[:], t.loss, 0)
		if err := t.be.Sync(); err != nil {
			return err
		}
		if math.IsNaN(float64(l[0])) || math.IsInf(float64(l[0]), 0) {
			return fmt.Errorf("the loss is %v; lower --lr", l[0])
		}
		return nil
	})
}

// RunReplay trains every epoch with the replay driver: the step is
// captured once (be must implement backend.Capturer) and launched for
// every batch; the host reads the epoch's sums at its end.
func (t *Trainer) RunReplay(ctx context.Context) (*Summary, error) {
	capt, ok := t.be.(backend.Capturer)
	if !ok {
		return nil, fmt.Errorf("link: replay needs a backend that captures (backend.Capturer); %s does not", t.be.Name())
	}
	if err := capt.BeginCapture(); err != nil {
		return nil, err
	}
	t.issueStep()
	rep, err := capt.EndCapture()
	if err != nil {
		return nil, err
	}
	defer rep.Close()
	return t.run(ctx, func() error {
		rep.Launch()
		return nil
	})
}

// steps is the number of steps of an epoch: a whole pass over the
// training edges, or Config.EpochSteps where that is fewer.
func (t *Trainer) steps() int {
	n := (dataset.Pairs(t.ds.Link.Train) + t.cfg.Batch - 1) / t.cfg.Batch
	if t.cfg.EpochSteps > 0 {
		n = min(n, t.cfg.EpochSteps)
	}
	return n
}

// stepEdges is the positive edges an epoch's steps take.
func (t *Trainer) stepEdges() int {
	return min(t.steps()*t.cfg.Batch, dataset.Pairs(t.ds.Link.Train))
}

// run trains the remaining epochs, each step by step().
func (t *Trainer) run(ctx context.Context, step func() error) (*Summary, error) {
	s := &Summary{BestValid: Metrics{AUC: -1}}
	if t.resumed != nil {
		s = t.resumed
	}
	edges := make([]int64, dataset.Pairs(t.ds.Link.Train))
	for i := range edges {
		edges[i] = int64(i)
	}
	for ; t.epoch < t.cfg.Epochs; t.epoch++ {
		start := time.Now()
		t.be.Write(t.perm, 0, t.rankOrder(train.Shuffle(edges, t.cfg.Seed, t.epoch)))
		t.be.Write(t.plan.Clock, 0, []int32{int32(t.epoch), 0})
		t.be.Fill(t.acc, 0)
		st := EpochStats{Epoch: t.epoch + 1, Steps: t.steps()}
		for i := 0; i < st.Steps; i++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := step(); err != nil {
				return nil, fmt.Errorf("link: epoch %d step %d: %w", st.Epoch, i+1, err)
			}
		}
		t.reduceSums()
		var acc [2]float32
		t.be.Read(acc[:], t.acc, 0)
		if err := t.be.Sync(); err != nil {
			return nil, err
		}
		st.Loss = float64(acc[0]) / float64(st.Steps)
		if math.IsNaN(st.Loss) || math.IsInf(st.Loss, 0) {
			return nil, fmt.Errorf("link: epoch %d: the training loss is %v; lower --lr", st.Epoch, st.Loss)
		}
		st.TrainAcc = float64(acc[1]) / float64(t.stepEdges()*(1+t.cfg.Negatives))
		last := t.epoch+1 == t.cfg.Epochs
		stop, newBest := false, false
		if (t.epoch+1)%max(t.cfg.EvalEvery, 1) == 0 || last {
			best := s.BestEpoch
			if err := t.evaluate(s, &st); err != nil {
				return nil, err
			}
			if newBest = s.BestEpoch != best; newBest {
				t.sinceBest = 0
			} else {
				t.sinceBest++
			}
			stop = t.cfg.Patience > 0 && t.sinceBest >= t.cfg.Patience
		}
		st.Seconds = time.Since(start).Seconds()
		s.Epochs = append(s.Epochs, st)
		if t.OnEpoch != nil {
			t.OnEpoch(st)
		}
		if t.RunDir != "" {
			t.epoch++ // the saved state counts this epoch as trained
			err := t.save(s, newBest)
			t.epoch--
			if err != nil {
				return nil, fmt.Errorf("link: saving epoch %d: %w", st.Epoch, err)
			}
		}
		if stop { // no better validation ROC-AUC in Patience evaluations
			t.epoch++
			break
		}
	}
	return s, nil
}

// evaluate scores the validation edges and, where they are the best so
// far (or there are none), the test edges.
func (t *Trainer) evaluate(s *Summary, st *EpochStats) error {
	emb, err := t.Embeddings()
	if err != nil {
		return err
	}
	hd := t.dec.host()
	if dataset.Pairs(t.ds.Link.Valid) > 0 {
		v, err := t.score(emb, hd, setValid)
		if err != nil {
			return err
		}
		st.Valid = &v
		if v.AUC <= s.BestValid.AUC {
			return nil
		}
		s.BestValid = v
	}
	s.BestEpoch = st.Epoch
	if s.Test, err = t.score(emb, hd, setTest); err != nil {
		return err
	}
	t.keepBest()
	return t.be.Sync()
}

// Embeddings computes every vertex's embedding (F32 [N, embed], row v for
// vertex v) with the training fanouts and no dropout, in batches of the
// plan's seed capacity; the training graph is sampled whole (no edge is
// excluded), with the clock of epoch 0, step 0 at every call. With
// Config.FullEval (--full-eval) they come from layer-wise full-neighbour
// inference instead (train.InferModel): exact, and one layer of the whole
// graph at a time.
func (t *Trainer) Embeddings() ([]float32, error) {
	p, dim := t.plan, t.cfg.embed()
	n := int(t.ds.Graph.NumNodes)
	out := make([]float32, n*dim)
	if t.cfg.FullEval {
		tab, err := train.InferModel(t.be, t.m, t.in, t.ds.Graph, p.Batch, train.InferOptions{})
		if err != nil {
			return nil, err
		}
		defer t.be.Free(tab)
		t.be.Read(out, tab, 0)
		return out, t.be.Sync()
	}
	ids := make([]int32, p.Batch)
	for start := 0; start < n; start += p.Batch {
		c := min(p.Batch, n-start)
		for i := range c {
			ids[i] = int32(start + i)
		}
		p.SetBatch(ids[:c], 0, 0) // keyed alike at every evaluation: the embeddings depend on the model alone
		p.Sample(t.in, t.cfg.Seed)
		p.Gather(t.in)
		emb := t.m.Forward(p.NNBatch(t.in), false, backend.Rand{Seed: t.cfg.Seed, Clock: p.Clock})
		t.be.Read(out[start*dim:(start+c)*dim], emb, 0)
	}
	if err := t.be.Sync(); err != nil {
		return nil, err
	}
	if err := t.m.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
