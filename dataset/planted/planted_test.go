package planted

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/internal/proxy"
	"github.com/fanout-gnn/fanout/dataset/internal/typedtest"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/internal/parallel"
)

// small is a schema of three types: paper (target, 16 features), author
// and venue (no features); writes, cites and published_in.
func small() Schema {
	return Schema{
		Types: []Type{{Name: "paper", Count: 2000, FeatDim: 16, Signal: 1.5}, {Name: "author", Count: 3000}, {Name: "venue", Count: 40}},
		Relations: []Relation{
			{Name: "writes", Src: 1, Dst: 0, Edges: 6000},
			{Name: "cites", Src: 0, Dst: 0, Edges: 8000},
			{Name: "published_in", Src: 0, Dst: 2, Edges: 2000},
		},
		Classes: 6, Affinity: 0.8, Skew: 3, Train: 600, Valid: 200, Test: 800,
	}
}

func TestGenerateSmall(t *testing.T) {
	d, err := Generate("small", small(), Options{Seed: 3, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	names := typedtest.RelationNames(d)
	want := []string{"(author, writes, paper)", "(paper, cites, paper)", "(paper, published_in, venue)",
		"(paper, rev_writes, author)", "(venue, rev_published_in, paper)"}
	if !slices.Equal(names, want) {
		t.Fatalf("relations %q, want %q", names, want)
	}
	for i, m := range []int64{6000, -1, 2000, 6000, 2000} {
		if got := d.Relations[i].Graph.NumEdges(); m >= 0 && got != m {
			t.Errorf("%s: %d edges, want exactly %d", names[i], got, m)
		}
	}
	cites := d.Relations[1].Graph
	if e := cites.NumEdges(); e <= 8000 || e > 16000 {
		t.Errorf("cites made undirected has %d edges, want 8,000 to 16,000", e)
	}
	if len(d.Train) != 600 || len(d.Valid) != 200 || len(d.Test) != 800 || d.FeatDim != 16 || d.Types[1].Features != nil {
		t.Errorf("split %d/%d/%d, width %d", len(d.Train), len(d.Valid), len(d.Test), d.FeatDim)
	}
	if !slices.Equal(d.Preprocessing, dataset.TypedSteps(true)) {
		t.Errorf("preprocessing %q", d.Preprocessing)
	}
	plain, err := Generate("small", small(), Options{Seed: 3, NoReverse: true})
	if err != nil || len(plain.Relations) != 3 || plain.Relations[1].Graph.NumEdges() != 8000 {
		t.Fatalf("without reverses: %v, %d relations", err, len(plain.Relations))
	}
}

// TestThreadsDoNotMatter: every array is the same on 1 and 3 threads.
func TestThreadsDoNotMatter(t *testing.T) {
	a, err := Generate("small", small(), Options{Seed: 5, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate("small", small(), Options{Seed: 5, Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Relations {
		ga, gb := a.Relations[i].Graph, b.Relations[i].Graph
		if !slices.Equal(ga.Indptr, gb.Indptr) || !slices.Equal(ga.Indices, gb.Indices) {
			t.Errorf("relation %d differs", i)
		}
	}
	if !slices.Equal(a.Types[0].Features, b.Types[0].Features) || !slices.Equal(a.Labels, b.Labels) || !slices.Equal(a.Test, b.Test) {
		t.Error("features, labels or split differ")
	}
	c, _ := Generate("small", small(), Options{Seed: 6, Threads: 1})
	if slices.Equal(a.Labels, c.Labels) {
		t.Error("another seed gives the same labels")
	}
}

// TestLabelsNeedTheGraph: the nearest class mean reads a paper's label far
// better from the mean of its cited papers' features than from its own.
func TestLabelsNeedTheGraph(t *testing.T) {
	d, err := Generate("small", small(), Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	own, nbr := proxy.Relation(d, 1)
	t.Logf("nearest class mean: own features %.3f, cited papers' mean %.3f", own, nbr)
	if own > 0.5 || nbr-own < 0.25 {
		t.Fatalf("own %.3f, neighbours %.3f: want own <= 0.5 and neighbours 0.25 above", own, nbr)
	}
}

// TestRelationsRespectCommunities: a relation's edges join one community
// about Affinity + (1-Affinity)/Classes of the time, and its degrees are
// skewed (the largest far above the mean).
func TestRelationsRespectCommunities(t *testing.T) {
	s := small()
	src := newPopulation(3000, s.Classes, 1, s.Skew, 1, 2)
	dst := newPopulation(2000, s.Classes, 0, s.Skew, 1, 2)
	d := newDrawer(src, dst, 0, s.Affinity, 1, 2, parallel.NewProgress(nil))
	g, err := d.exact(6000, 2000, 3000, false, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for v := range g.NumNodes {
		for _, u := range g.Neighbors32(v) {
			if src.comm[u] == dst.comm[v] {
				same++
			}
		}
	}
	share, want := float64(same)/6000, s.Affinity+(1-s.Affinity)/float64(s.Classes)
	st := g.DegreeStats()
	t.Logf("within a community %.3f (expected about %.3f); in-degrees %+v", share, want, st)
	if math.Abs(share-want) > 0.03 {
		t.Errorf("share within a community %.3f, want %.3f ± 0.03", share, want)
	}
	if float64(st.Max) < 6*st.Mean {
		t.Errorf("in-degrees not skewed: max %d, mean %.2f", st.Max, st.Mean)
	}
}

// TestAliasDraws: a segment's draws follow its weights.
func TestAliasDraws(t *testing.T) {
	w := []float64{1, 0, 3, 6, 0.5, 1.5}
	a := newAlias(int64(len(w) + 2))
	a.fill(2, w)
	const draws = 120000
	count := make([]int, len(w))
	k := key(9, streamEdges, 0)
	for i := range draws {
		r := k.Words(uint32(i), 0)
		slot := 2 + int64(uint64(r[0])*uint64(len(w))>>32)
		count[a.resolve(slot, r[1])-2]++
	}
	for i, x := range w {
		want := x / 12 * draws
		if math.Abs(float64(count[i])-want) > 4*math.Sqrt(want)+1 {
			t.Errorf("slot %d: %d draws, want about %.0f", i, count[i], want)
		}
	}
}

// TestTrimKeepsSmallestWords: trim keeps the m edges that the sorted
// order of (word, edge) puts first, rows still sorted; exact gives a
// relation within one type exactly m edges, without self loops.
func TestTrimKeepsSmallestWords(t *testing.T) {
	s := small()
	p := newPopulation(2000, s.Classes, 0, s.Skew, 1, 1)
	d := newDrawer(p, p, 1, s.Affinity, 1, 1, parallel.NewProgress(nil))
	from, to := d.draw(0, 5000)
	g, err := graph.FromEdges(2000, to, from, graph.BuildOptions{Dedup: true})
	if err != nil {
		t.Fatal(err)
	}
	k := key(1, streamTrim, 0)
	var all []ranked
	for v := range g.NumNodes {
		for _, u := range g.Neighbors32(v) {
			w := k.Words(uint32(v), uint32(u))
			all = append(all, ranked{uint64(w[0])<<32 | uint64(w[1]), uint64(v)<<32 | uint64(u)})
		}
	}
	slices.SortFunc(all, ranked.compare)
	const m = 3000
	want := map[uint64]bool{}
	for _, r := range all[:m] {
		want[r.edge] = true
	}
	got := trim(g, m, k, 3)
	if got.NumEdges() != m {
		t.Fatalf("%d edges, want %d", got.NumEdges(), m)
	}
	for v := range got.NumNodes {
		row := got.Neighbors32(v)
		for i, u := range row {
			if !want[uint64(v)<<32|uint64(u)] || (i > 0 && row[i-1] >= u) {
				t.Fatalf("row %d: %v", v, row)
			}
		}
	}
	within, err := d.exact(4000, 2000, 2000, true, 1, 1)
	if err != nil || within.NumEdges() != 4000 {
		t.Fatalf("%v, %d edges", err, within.NumEdges())
	}
	for v := range within.NumNodes {
		if slices.Contains(within.Neighbors32(v), int32(v)) {
			t.Fatalf("self loop at %d", v)
		}
	}
	rank := []ranked{{5, 1}, {3, 9}, {3, 2}, {1 << 60, 0}, {7 << 50, 4}, {0, 8}}
	sorted := slices.Clone(rank)
	slices.SortFunc(sorted, ranked.compare)
	for m := 1; m <= len(rank); m++ {
		if got := cutoff(rank, int64(m)); got != sorted[m-1] {
			t.Errorf("cutoff %d: %v, want %v", m, got, sorted[m-1])
		}
	}
}

func TestDegreeWeight(t *testing.T) {
	for _, c := range []struct {
		w    uint32
		skew int
		want float64
	}{{0, 3, 1}, {3 << 30, 2, 2}, {15 << 28, 1, 2}, {15 << 28, 3, 8}, {1 << 31, 0, 1}} {
		if got := degreeWeight(c.w, c.skew); got != c.want {
			t.Errorf("degreeWeight(%#x, %d) = %v, want %v", c.w, c.skew, got, c.want)
		}
	}
}

func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		edit func(s *Schema)
		want string
	}{
		{func(s *Schema) { s.Classes = 1 }, "1 classes"},
		{func(s *Schema) { s.Relations[2].Edges = 41000 }, "more than half"},
		{func(s *Schema) { s.Types[2].Name = "ve nue" }, `holds " "`},
		{func(s *Schema) { s.Train = 1900 }, "split 1900/200/800"},
		{func(s *Schema) { s.Skew = 4 }, "skew 4"},
	} {
		s := small()
		c.edit(&s)
		if _, err := Generate("small", s, Options{}); err == nil || !strings.Contains(err.Error(), "schema small: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}
