package rng

import (
	"math"
	"testing"
)

// Known-answer vectors of Philox4x32-10 (Random123's kat_vectors).
func TestPhiloxKnownAnswers(t *testing.T) {
	cases := []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0},
			[4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	}
	for _, c := range cases {
		if got := Philox(c.ctr, c.key); got != c.want {
			t.Errorf("Philox(%#x, %#x) = %#x, want %#x", c.ctr, c.key, got, c.want)
		}
	}
}

func TestKeyLayout(t *testing.T) {
	k := Key{Seed: 0x0123456789abcdef, Epoch: 3, Step: 77, Stream: 5}
	if got, want := k.PhiloxKey(), [2]uint32{0x89abcdef, 0x01234567}; got != want {
		t.Fatalf("PhiloxKey = %#x, want %#x", got, want)
	}
	if got, want := k.Counter(11, 2), [4]uint32{11, 2, 77, 3<<8 | 5}; got != want {
		t.Fatalf("Counter = %v, want %v", got, want)
	}
	w := Philox([4]uint32{11, 2, 77, 3<<8 | 5}, [2]uint32{0x89abcdef, 0x01234567})
	if got := k.Words(11, 2); got != w {
		t.Fatalf("Words = %#x, want %#x", got, w)
	}
	for j := uint32(8); j < 12; j++ {
		if got := k.Word(11, j); got != w[j%4] {
			t.Fatalf("Word(11, %d) = %#x, want %#x", j, got, w[j%4])
		}
	}
	// Different fields give different streams.
	base := k.Words(0, 0)
	for _, o := range []Key{
		{Seed: k.Seed + 1, Epoch: 3, Step: 77, Stream: 5},
		{Seed: k.Seed, Epoch: 4, Step: 77, Stream: 5},
		{Seed: k.Seed, Epoch: 3, Step: 78, Stream: 5},
		{Seed: k.Seed, Epoch: 3, Step: 77, Stream: 6},
	} {
		if o.Words(0, 0) == base {
			t.Errorf("key %+v gives the same words as %+v", o, k)
		}
	}
}

func TestUniform(t *testing.T) {
	cases := []struct{ w, m, want uint32 }{
		{0, 10, 0},
		{0xffffffff, 10, 9},
		{0x80000000, 10, 5},
		{0x7fffffff, 10, 4},
		{0xffffffff, 1, 0},
		{0x12345678, 0, 0},
		{0xffffffff, 0xffffffff, 0xfffffffe},
	}
	for _, c := range cases {
		if got := Uniform(c.w, c.m); got != c.want {
			t.Errorf("Uniform(%#x, %d) = %d, want %d", c.w, c.m, got, c.want)
		}
	}
}

func TestDropThreshold(t *testing.T) {
	cases := []struct {
		p    float32
		want uint32
	}{
		{0, 0},
		{-0.5, 0},
		{float32(math.NaN()), 0},
		{0.5, 0x80000000},
		{0.25, 0x40000000},
		{1, 0xffffffff},
		{2, 0xffffffff},
		{float32(math.Inf(1)), 0xffffffff},
	}
	for _, c := range cases {
		if got := DropThreshold(c.p); got != c.want {
			t.Errorf("DropThreshold(%v) = %#x, want %#x", c.p, got, c.want)
		}
	}
	// The kept fraction over many words is close to 1-p.
	k := Key{Seed: 42, Stream: 128}
	th := DropThreshold(0.3)
	kept := 0
	const n = 40000
	for i := uint32(0); i < n; i++ {
		if k.Word(i/100, i%100) >= th {
			kept++
		}
	}
	if f := float64(kept) / n; math.Abs(f-0.7) > 0.015 {
		t.Errorf("kept fraction %.4f, want about 0.7", f)
	}
}
