package rmat

import (
	"encoding/binary"
	"github.com/fanout-gnn/fanout/dataset"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

func TestExperiment(t *testing.T) {
	name := os.Getenv("RMAT_EXP")
	if name == "" {
		t.Skip()
	}
	p, _ := Lookup(name)
	if s := os.Getenv("RMAT_SIG"); s != "" {
		p.Signal, _ = strconv.ParseFloat(s, 64)
	}
	t0 := time.Now()
	last := t0
	ds, err := Generate(p, Options{Seed: 1, Progress: func(s string, d, tot int64) {
		if d == tot {
			t.Logf("%-9s done %6.2fs (+%.2fs)", s, time.Since(t0).Seconds(), time.Since(last).Seconds())
			last = time.Now()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("total %.2fs", time.Since(t0).Seconds())
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap sys %.2f GB", float64(ms.HeapSys)/1e9)
	g := ds.Graph
	t.Logf("n=%d edges=%d stats=%+v", g.NumNodes, g.NumEdges(), g.DegreeStats())
	t.Logf("homophily=%.3f", EdgeHomophily(g, ds.Labels))
	cc := ClassCounts(ds.Labels, ds.NumClasses)
	t.Logf("class counts min=%d max=%d %v", slices.Min(cc), slices.Max(cc), cc[:min(len(cc), 10)])
	t.Logf("split %d/%d/%d", len(ds.Train), len(ds.Valid), len(ds.Test))
	if len(ds.Test) > 300000 {
		ds.Test = ds.Test[:300000]
	}
	h1 := neighbourMean(g, ds.Features, ds.FeatDim)
	t.Logf("acc own=%.3f nbr1=%.3f", centroidAccuracy(ds, ds.Features, ds.FeatDim), centroidAccuracy(ds, h1, ds.FeatDim))
}

func TestExport(t *testing.T) {
	dir := os.Getenv("RMAT_EXPORT")
	if dir == "" {
		t.Skip()
	}
	p, _ := Lookup("tiny")
	ds, err := Generate(p, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(dir, 0o755)
	w := func(name string, data any) {
		f, _ := os.Create(dir + "/" + name)
		defer f.Close()
		binary.Write(f, binary.LittleEndian, data)
	}
	w("indptr", ds.Graph.Indptr)
	w("indices", ds.Graph.Indices)
	w("feat", ds.Features)
	w("label", ds.Labels)
	w("train", ds.Train)
	w("valid", ds.Valid)
	w("test", ds.Test)
}

func TestExportVariants(t *testing.T) {
	dir := os.Getenv("RMAT_EXPORTV")
	if dir == "" {
		t.Skip()
	}
	p, _ := Lookup("tiny")
	base, _ := Generate(p, Options{Seed: 1})
	g := base.Graph
	types := plantTypes(g, p.Classes, 1)
	write := func(name string, labels []int32, feat []float32) {
		d := dir + "/" + name
		os.MkdirAll(d, 0o755)
		w := func(n string, data any) {
			f, _ := os.Create(d + "/" + n)
			defer f.Close()
			binary.Write(f, binary.LittleEndian, data)
		}
		train, valid, test, _ := split(p, labels, 1)
		w("indptr", g.Indptr)
		w("indices", g.Indices)
		w("feat", feat)
		w("label", labels)
		w("train", train)
		w("valid", valid)
		w("test", test)
		cc := ClassCounts(labels, p.Classes)
		h1 := neighbourMean(g, feat, p.FeatDim)
		ds := &dataset.Dataset{Graph: g, FeatDim: p.FeatDim, Labels: labels, NumClasses: p.Classes, Train: train, Test: test}
		t.Logf("%s: homophily %.3f classes %v own %.3f nbr %.3f", name, EdgeHomophily(g, labels), cc,
			centroidAccuracy(ds, feat, p.FeatDim), centroidAccuracy(ds, h1, p.FeatDim))
	}
	prog := newProgress(nil)
	// V0: current
	write("v0", base.Labels, base.Features)
	// V3: signal 7
	write("v3", base.Labels, makeFeatures(types, p.Classes, p.FeatDim, 7, 1, 2, prog))
	// V1: fixed priority ties
	l1 := make([]int32, g.NumNodes)
	cnt := make([]int32, p.Classes)
	for v := range g.NumNodes {
		l1[v] = voteLabel(g.Neighbors32(v), types, 0, int32(p.Classes), cnt)
	}
	write("v1", l1, base.Features)
	// V2: strengths
	str := make([]float32, g.NumNodes)
	for v := range str {
		str[v] = 0.5 + float32(key(1, 99, uint64(v))>>40)/float32(1<<24)
	}
	feat2 := makeFeatures(types, p.Classes, p.FeatDim, 0, 1, 2, prog)
	cent := centroids(p.Classes, p.FeatDim, 5, 1)
	for v := range g.NumNodes {
		c := int(types[v])
		for j := range p.FeatDim {
			feat2[int(v)*p.FeatDim+j] += str[v] * cent[c*p.FeatDim+j]
		}
	}
	l2 := make([]int32, g.NumNodes)
	w := make([]float32, p.Classes)
	for v := range g.NumNodes {
		l2[v] = -1
		nb := g.Neighbors32(v)
		if len(nb) == 0 {
			continue
		}
		clear(w)
		for _, u := range nb {
			w[types[u]] += str[u]
		}
		best := 0
		for c := range w {
			if w[c] > w[best] {
				best = c
			}
		}
		l2[v] = int32(best)
	}
	write("v2", l2, feat2)
}

func TestBig(t *testing.T) {
	name := os.Getenv("RMAT_BIG")
	if name == "" {
		t.Skip()
	}
	p, _ := Lookup(name)
	t0 := time.Now()
	last := t0
	ds, err := Generate(p, Options{Seed: 1, Progress: func(s string, d, tot int64) {
		if d == tot {
			t.Logf("%-9s done %6.2fs (+%.2fs)", s, time.Since(t0).Seconds(), time.Since(last).Seconds())
			last = time.Now()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("total %.2fs", time.Since(t0).Seconds())
	g := ds.Graph
	t.Logf("n=%d edges=%d stats=%+v", g.NumNodes, g.NumEdges(), g.DegreeStats())
	t.Logf("homophily=%.3f", EdgeHomophily(g, ds.Labels))
	cc := ClassCounts(ds.Labels, ds.NumClasses)
	t.Logf("class counts min=%d max=%d", slices.Min(cc), slices.Max(cc))
	t.Logf("split %d/%d/%d", len(ds.Train), len(ds.Valid), len(ds.Test))
}
