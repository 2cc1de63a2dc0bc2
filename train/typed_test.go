package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
	"github.com/fanout-gnn/fanout/dataset"
)

// heteroTiny generates the hetero-tiny preset: ogbn-mag's four types and
// seven relations (reverses included), papers labelled by planted
// communities.
func heteroTiny(t *testing.T) *dataset.Dataset { return presetData(t, "hetero-tiny") }

// heteroConfig is hetero-tiny's preset settings for model.
func heteroConfig(t *testing.T, model string) Config {
	c := presetConfig(t, "hetero-tiny")
	c.Model = model
	return c
}

// majorityShare is the share of ids whose label is the most common one.
func majorityShare(labels []int32, ids []int64) float64 {
	count := map[int32]int{}
	most := 0
	for _, v := range ids {
		count[labels[v]]++
		most = max(most, count[labels[v]])
	}
	return float64(most) / float64(len(ids))
}

// TestTypedLearns: rsage, rgcn, rgcn with bases and rgat (four heads; and
// as MLPerf's benchmark shapes it, a linear head over the last layer),
// trained on hetero-tiny on the CPU, classify its test papers far above
// the most common class: their labels are communities that the relations
// respect.
func TestTypedLearns(t *testing.T) {
	ds := heteroTiny(t)
	floor := majorityShare(ds.Labels, ds.Test)
	for _, c := range []struct {
		name, model string
		bases       int
		heads       int
		jk          string
	}{{"rsage", "rsage", 0, 0, ""}, {"rgcn", "rgcn", 0, 0, ""}, {"rgcn-bases", "rgcn", 4, 0, ""}, {"rsage-batchnorm", "rsage", -1, 0, ""},
		{"rgat", "rgat", 0, 4, ""}, {"rgat-jk-last", "rgat", 0, 4, "last"}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := heteroConfig(t, c.model)
			cfg.Bases, cfg.Epochs, cfg.JK = max(c.bases, 0), 8, c.jk
			if c.bases < 0 {
				cfg.Norm = "batch"
			}
			if c.heads > 0 {
				cfg.Heads = c.heads
			}
			data := ds
			if c.bases > 0 {
				// Bases share one input width: fields learn rows as wide
				// as papers' features instead of their own 16.
				data = withoutFeatures(ds, "field_of_study")
			}
			tr, sum := trained(t, data, cfg, Options{})
			acc, _, err := tr.Evaluate(ds.Test)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: test accuracy %.3f (most common class %.3f), best validation %v", c.name, acc, floor, sum.BestValid)
			if acc < floor+0.4 {
				t.Errorf("%s: test accuracy %.3f, want at least %.3f (most common class %.3f + 0.4)", c.name, acc, floor+0.4, floor)
			}
		})
	}
}

// withoutFeatures is ds with type name's features dropped (a shallow
// copy: the tables are shared).
func withoutFeatures(ds *dataset.Dataset, name string) *dataset.Dataset {
	d := *ds
	d.Types = slices.Clone(ds.Types)
	ty := &d.Types[ds.TypeIndex(name)]
	ty.FeatDim, ty.Features, ty.FeaturesBF16 = 0, nil, nil
	return &d
}

// TestTypedEnvelopeHolds: no sampled batch of hetero-tiny exceeds the
// conservative typed envelope, every relation's block is a valid sample
// (sources of the right type, destinations first and distinct), and the
// same seed and clock draw the same batch.
func TestTypedEnvelopeHolds(t *testing.T) {
	ds := heteroTiny(t)
	cfg := heteroConfig(t, "rsage")
	tr, err := New(cpu.New(2), ds, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	p := tr.plan
	th := p.Typed
	perm := Shuffle(ds.Train, cfg.Seed, 0)
	draw := func(s int) []int32 { return sampleTyped(t, tr, s) }
	for s := 0; s*cfg.Batch < len(perm); s++ {
		counts := draw(s)
		for l, lc := range th.Caps {
			for ty, tc := range lc.Types {
				if n := int(counts[th.Src[l][ty].Off]); n > tc.Src || (tc.Src > 0 && n < 0) {
					t.Fatalf("step %d layer %d type %s: %d sources, capacity %d", s, l, ds.Types[ty].Name, n, tc.Src)
				}
			}
			for r, rel := range ds.Relations {
				b := th.Rels[l][r]
				if tc := lc.Types[rel.Dst]; tc.Dst == 0 {
					continue
				}
				e := int(counts[b.NumEdges.Off])
				if e > lc.Edges[r] {
					t.Fatalf("step %d layer %d relation %s: %d edges, capacity %d", s, l, rel.Name, e, lc.Edges[r])
				}
				dst := p.Seeds
				if l < len(th.Caps)-1 {
					dst = th.SrcIDs[l+1][rel.Dst]
				}
				checkTypedBlock(t, tr.be, rel, b, dst, e, int(counts[th.Src[l][rel.Src].Off]), th.Fanouts[len(th.Caps)-1-l][r])
			}
		}
	}
	first := draw(0)
	draw(1)
	if again := draw(0); !slices.Equal(first, again) {
		t.Errorf("step 0 drawn twice: counts %v then %v", first, again)
	}
}

// sampleTyped samples step s of epoch 0 on tr's typed plan and returns
// its counts (TypedHops.Counts) as read back.
func sampleTyped(t *testing.T, tr *Trainer, s int) []int32 {
	t.Helper()
	p, cfg := tr.plan, tr.cfg
	perm := Shuffle(tr.ds.Train, cfg.Seed, 0)
	p.SetBatch(perm[s*cfg.Batch:min(len(perm), (s+1)*cfg.Batch)], 0, s)
	p.Sample(tr.in, cfg.Seed)
	counts := make([]int32, p.Typed.Counts.Len())
	tr.be.Read(counts, p.Typed.Counts, 0)
	if err := tr.sync(); err != nil {
		t.Fatal(err)
	}
	return counts
}

// checkTypedBlock checks one relation's sampled block: each edge's source
// is a neighbour of its destination (dst, the destination type's ids) in
// the relation, no destination has more than fanout, and the source ids
// of the type are distinct.
func checkTypedBlock(t *testing.T, be backend.Backend, rel dataset.Relation, b *backend.Block, dst backend.Buffer, edges, nSrc, fanout int) {
	t.Helper()
	nDst := readCount(t, be, b.NumDst)
	indptr := make([]int32, nDst+1)
	be.Read(indptr, b.Indptr, 0)
	idx := make([]int32, max(edges, 1))
	be.Read(idx, b.Indices, 0)
	src := make([]int32, max(nSrc, 1))
	be.Read(src, b.SrcIDs, 0)
	dsts := make([]int32, max(nDst, 1))
	be.Read(dsts, dst, 0)
	if err := be.Sync(); err != nil {
		t.Fatal(err)
	}
	seen := map[int32]bool{}
	for _, v := range src[:nSrc] {
		if seen[v] {
			t.Fatalf("relation %s: source %d twice", rel.Name, v)
		}
		seen[v] = true
	}
	if int(indptr[nDst]) != edges {
		t.Fatalf("relation %s: indptr ends at %d, %d edges", rel.Name, indptr[nDst], edges)
	}
	g := rel.Graph
	for d := range nDst {
		row := g.Indices[g.Indptr[dsts[d]]:g.Indptr[dsts[d]+1]]
		if n := int(indptr[d+1] - indptr[d]); n > fanout || n > len(row) {
			t.Fatalf("relation %s: destination %d has %d sampled of %d, fanout %d", rel.Name, dsts[d], n, len(row), fanout)
		}
		for e := indptr[d]; e < indptr[d+1]; e++ {
			i := idx[e]
			if i < 0 || int(i) >= nSrc {
				t.Fatalf("relation %s: edge %d has local source %d of %d", rel.Name, e, i, nSrc)
			}
			if !slices.Contains(row, src[i]) {
				t.Fatalf("relation %s: edge %d's source %d is no neighbour of %d", rel.Name, e, src[i], dsts[d])
			}
		}
	}
}

// readCount reads a count's live value.
func readCount(t *testing.T, be backend.Backend, c backend.Count) int {
	t.Helper()
	v := make([]int32, 1)
	be.Read(v, c.Buf, c.Off)
	if err := be.Sync(); err != nil {
		t.Fatal(err)
	}
	return int(v[0])
}

// TestTypedTablesTrainReadRowsOnly: one step changes a featureless type's
// learned rows that the batch read and no other row.
func TestTypedTablesTrainReadRowsOnly(t *testing.T) {
	ds := heteroTiny(t)
	cfg := heteroConfig(t, "rsage")
	be := cpu.New(2)
	tr, err := New(be, ds, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	author := ds.TypeIndex("author")
	emb := tr.in.Typed.Embed[author]
	if emb == nil {
		t.Fatal("author has no learned table")
	}
	before := make([]float32, emb.W.Len())
	be.Read(before, emb.W, 0)
	p := tr.plan
	p.SetBatch(Shuffle(ds.Train, cfg.Seed, 0)[:cfg.Batch], 0, 0)
	p.Sample(tr.in, cfg.Seed)
	p.Gather(tr.in)
	p.Learn(tr.model, tr.in, cfg.Seed, tr.adam)
	after := make([]float32, emb.W.Len())
	be.Read(after, emb.W, 0)
	n := readCount(t, be, p.Typed.Src[0][author])
	ids := make([]int32, max(n, 1))
	be.Read(ids, p.Typed.SrcIDs[0][author], 0)
	if err := tr.sync(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("the batch read no author rows")
	}
	read := map[int]bool{}
	for _, v := range ids[:n] {
		read[int(v)] = true
	}
	dim := emb.Shape[1]
	changed := 0
	for row := range emb.Shape[0] {
		same := slices.Equal(before[row*dim:(row+1)*dim], after[row*dim:(row+1)*dim])
		switch {
		case !read[row] && !same:
			t.Fatalf("author row %d changed but was not read", row)
		case read[row] && !same:
			changed++
		}
	}
	if changed < n/2 {
		t.Errorf("%d of the %d author rows read changed", changed, n)
	}
	for _, v := range after {
		if math.IsNaN(float64(v)) {
			t.Fatal("a learned row holds NaN")
		}
	}
}

// TestTypedReplayReproducesEagerBitwise: a typed run replayed (CPU under
// the record wrapper) gives the eager run's every step loss and final
// parameters, learned tables and running statistics included, bit for
// bit: the whole typed step, sampling included, is captured (with batch
// and layer normalisation too; rgat's attention dropout drawn on the
// device's clock). The replayed plan is at the tightened envelope, the
// eager one at the conservative: the results do not depend on capacity.
func TestTypedReplayReproducesEagerBitwise(t *testing.T) {
	ds := heteroTiny(t)
	for _, c := range []struct {
		model, norm, jk string
		attnDropout     float32
	}{{"rsage", "", "", 0}, {"rgcn", "", "", 0}, {"rsage", "batch", "", 0}, {"rgcn", "layer", "cat", 0}, {"rsage", "", "max", 0},
		{"rgat", "", "", 0.3}, {"rgat", "layer", "last", 0}} {
		cfg := heteroConfig(t, c.model)
		cfg.Epochs, cfg.Norm, cfg.JK = 2, c.norm, c.jk
		if c.model == "rgat" {
			cfg.Heads, cfg.AttnDropout = 4, c.attnDropout
		}
		replayMatchesEagerGrown(t, fmt.Sprintf("%s norm %s jk %s attention dropout %g", c.model, c.norm, c.jk, c.attnDropout), ds, cfg, 8)
	}
}

// TestTypedRefusals: a typed dataset with a one-type model, a one-type
// dataset with a typed model, an unknown relation's fanouts, bases over
// input rows of several widths, attention heads of a model without
// attention and rgat's heads that do not divide the hidden width are
// refused by the setting's name.
func TestTypedRefusals(t *testing.T) {
	ds := heteroTiny(t)
	for _, c := range []struct {
		name string
		edit func(*Config)
		data *dataset.Dataset
		key  string
	}{
		{"one-type model", func(c *Config) { c.Model = "sage" }, ds, "model"},
		{"typed model, one type", func(c *Config) {}, tinyData(t), "model"},
		{"unknown relation", func(c *Config) { c.RelationFanouts = map[string][]int{"likes": {1, 1}} }, ds, "relation_fanouts"},
		{"bases, two widths", func(c *Config) { c.Model, c.Bases = "rgcn", 2 }, ds, "bases"},
		{"full eval", func(c *Config) { c.FullEval = true }, ds, "full_eval"},
		{"heads without attention", func(c *Config) { c.Heads = 4 }, ds, "heads"},
		{"rgat, hidden of 64 in 3 heads", func(c *Config) { c.Model, c.Heads = "rgat", 3 }, ds, "hidden"},
		{"rgat, one-type data", func(c *Config) { c.Model = "rgat" }, tinyData(t), "model"},
	} {
		cfg := heteroConfig(t, "rsage")
		c.edit(&cfg)
		tr, err := New(cpu.New(1), c.data, cfg, Options{})
		if err == nil {
			tr.Close()
			t.Errorf("%s: accepted", c.name)
			continue
		}
		var se *SettingError
		if !errors.As(err, &se) || se.Key != c.key {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.key)
		}
	}
}

// TestTypedRelationFanouts: a relation's own fanouts apply to it alone,
// by its name or src:name:dst; a fanout of 0 samples none of its edges.
func TestTypedRelationFanouts(t *testing.T) {
	ds := heteroTiny(t)
	cfg := heteroConfig(t, "rsage")
	cfg.RelationFanouts = map[string][]int{"paper:cites:paper": {0, 0}, "writes": {3, 2}}
	f, err := cfg.TypedFanouts(ds)
	if err != nil {
		t.Fatal(err)
	}
	for r, rel := range ds.Relations {
		want := cfg.Fanouts
		switch rel.Name {
		case "cites":
			want = []int{0, 0}
		case "writes":
			want = []int{3, 2}
		}
		for h := range want {
			if f[h][r] != want[h] {
				t.Errorf("relation %s hop %d: fanout %d, want %d", rel.Name, h, f[h][r], want[h])
			}
		}
	}
	tr, err := New(cpu.New(2), ds, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	p := tr.plan
	p.SetBatch(Shuffle(ds.Train, cfg.Seed, 0)[:cfg.Batch], 0, 0)
	p.Sample(tr.in, cfg.Seed)
	cites := slices.IndexFunc(ds.Relations, func(r dataset.Relation) bool { return r.Name == "cites" })
	for l := range p.Typed.Caps {
		if n := readCount(t, tr.be, p.Typed.Rels[l][cites].NumEdges); n != 0 {
			t.Errorf("layer %d: cites sampled %d edges at fanout 0", l, n)
		}
	}
}

// TestTypedEmbeddings: after training, every type's last hidden rows come
// out per type: the target's equal the rows its evaluation computes for
// the same seeds bit for bit (the same samples), an author's are finite,
// not all alike, and the same when asked again; the training plan trains
// on afterwards.
func TestTypedEmbeddings(t *testing.T) { checkTypedEmbeddings(t, cpu.New(2), "") }

// checkTypedEmbeddings is TestTypedEmbeddings on be, with jumping
// knowledge jk ("" for the last layer's).
func checkTypedEmbeddings(t *testing.T, be backend.Backend, jk string) {
	ds := heteroTiny(t)
	cfg := heteroConfig(t, "rsage")
	cfg.Epochs, cfg.JK = 2, jk
	tr, err := New(be, ds, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	paper, author := ds.TypeIndex("paper"), ds.TypeIndex("author")
	emb, dim, err := tr.TypedEmbeddings(paper)
	if err != nil {
		t.Fatal(err)
	}
	if dim != cfg.Hidden || len(emb) != int(ds.Types[paper].Count)*dim {
		t.Fatalf("papers' embeddings: %d values of width %d", len(emb), dim)
	}
	// The evaluation plan's forward pass over the first batch of papers.
	p := tr.eval
	seeds := make([]int32, cfg.Batch)
	for i := range seeds {
		seeds[i] = int32(i)
	}
	p.SetBatch(seeds, 0, 0)
	p.Sample(tr.in, cfg.Seed^evalSeedMix)
	p.GatherRows(tr.in)
	tr.model.Forward(p.NNBatch(tr.in), false, backend.Rand{Seed: cfg.Seed, Clock: p.Clock})
	want := make([]float32, cfg.Batch*dim)
	tr.be.Read(want, tr.model.TypedOutput(cfg.Layers-2, paper), 0)
	if err := tr.sync(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(emb[:len(want)], want) {
		t.Fatal("the papers' embeddings differ from their evaluation's hidden rows")
	}
	a, _, err := tr.TypedEmbeddings(author)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := tr.TypedEmbeddings(author)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, again) {
		t.Error("the authors' embeddings differ when asked twice")
	}
	distinct := map[float32]bool{}
	for _, v := range a {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("an author's embedding holds %v", v)
		}
		distinct[v] = true
	}
	if len(distinct) < len(a)/10 {
		t.Errorf("the authors' embeddings hold %d distinct values of %d", len(distinct), len(a))
	}
	if _, _, err := tr.TypedEmbeddings(ds.TypeIndex("institution")); err != nil {
		t.Errorf("institutions: %v", err)
	}
	cfg.Epochs = 3
	tr.cfg.Epochs = 3
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatalf("training after the embeddings: %v", err)
	}
}
