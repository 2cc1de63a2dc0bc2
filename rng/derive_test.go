package rng

import "testing"

// TestDerive: part 0 is the seed; parts differ from one another and from
// the seed, for neighbouring seeds too.
func TestDerive(t *testing.T) {
	if Derive(42, 0) != 42 {
		t.Fatalf("Derive(42, 0) = %d, want 42", Derive(42, 0))
	}
	seen := map[uint64]string{}
	for seed := uint64(0); seed < 4; seed++ {
		for k := range 64 {
			d := Derive(seed, k)
			if k > 0 && d == seed {
				t.Fatalf("Derive(%d, %d) is the seed", seed, k)
			}
			if was, ok := seen[d]; ok {
				t.Fatalf("Derive(%d, %d) = Derive%s", seed, k, was)
			}
			seen[d] = "(" + string(rune('0'+seed)) + ", ...)"
		}
	}
}
