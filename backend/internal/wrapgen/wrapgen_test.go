package wrapgen

import (
	"strings"
	"testing"
)

// TestMethods: every op without results of the required interfaces is
// generated once, with the backend's types qualified and a parameter
// named b (the wrappers' receiver) renamed; methods with results are not.
func TestMethods(t *testing.T) {
	ms, err := Methods("../..")
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Method{}
	for _, m := range ms {
		if _, dup := by[m.Name]; dup {
			t.Fatalf("%s generated twice", m.Name)
		}
		by[m.Name] = m
	}
	for name, params := range map[string]string{
		"SampleLayer":   "g backend.Graph, dst backend.Buffer, nDst backend.Count, fanout int, r backend.Rand, out *backend.Block",
		"DotSum":        "a, bb backend.Buffer, n backend.Count, dim int, out backend.Buffer",
		"SliceSeeds":    "perm backend.Buffer, n, batch int, clock backend.Buffer, out backend.Buffer, count backend.Count",
		"EdgeSoftmax":   "blk *backend.Block, el, er backend.Buffer, heads int, slope, p float32, r backend.Rand, coef backend.Buffer",
		"AddCount":      "c backend.Count, delta int32, unless backend.Buffer",
		"HeadAggregate": "blk *backend.Block, coef, x backend.Buffer, heads, dim int, mean bool, out backend.Buffer",
	} {
		m, ok := by[name]
		if !ok {
			t.Errorf("%s not generated", name)
			continue
		}
		if m.Params != params {
			t.Errorf("%s(%s), want (%s)", name, m.Params, params)
		}
	}
	for name, cap := range map[string]string{"HeadDot": "Attention", "ReplaceRows": "HotRows", "GatherTiered": "TieredGather", "Linear": ""} {
		if m, ok := by[name]; !ok || m.Cap != cap {
			t.Errorf("%s: generated %t, capability %q; want %q", name, ok, m.Cap, cap)
		}
	}
	if _, ok := by["MaskGraph"]; ok {
		t.Error("MaskGraph returns a graph and an error: it must stay hand-written")
	}
	if m := by["DotSum"]; m.Args != "a, bb, n, dim, out" {
		t.Errorf("DotSum's arguments %q", m.Args)
	}
	src, err := Generate("../..", "profile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), `b.op("Linear", func() { b.inner.Linear(x, n, w, in, out, y, accumulate) })`) {
		t.Errorf("profile's Linear is not forwarded under its name:\n%s", src)
	}
	if !strings.Contains(string(src), `b.op("HeadDot", func() { b.inner.(backend.Attention).HeadDot(x, n, heads, dim, a, out) })`) {
		t.Errorf("profile's HeadDot does not reach the inner backend's Attention:\n%s", src)
	}
}
