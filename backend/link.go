package backend

import "fmt"

// The negatives' layouts of a link step (the layout argument of the Link
// ops EdgeSeeds, PairProduct and PairProductBackward): where positive i's
// j-th negative destination lies among the ends of a step of b positives
// with k negatives each. The positives' sources are positions [0, b) and
// their destinations [b, 2b) in every layout.
const (
	// NegOwn: k negatives drawn for each positive, position 2b + i·k + j.
	NegOwn = 0
	// NegShared: k negatives drawn once for the step, every positive's:
	// position 2b + j.
	NegShared = 1
	// NegInBatch: the other positives' destinations, no ends of their
	// own: position b + (i + 1 + j mod (b-1)) mod b, the next k positives'
	// destinations, cycling over the other b-1 when k >= b (a step of one
	// positive has no other: its negative is its own destination).
	NegInBatch = 2
)

// MaxShared bounds the negatives a step shares (NegShared): EdgeSeeds
// keeps the drawn vertices in a table of twice as many slots in the
// GPU's shared memory.
const MaxShared = 4096

// SharedIndex is the Philox index of a step's shared negatives (NegShared:
// word j of its sequence is draw j), above every edge id, whose sequences
// the other layouts draw from.
const SharedIndex = 1 << 31

// SharedBudget is the draws by degree that a step's shared negatives
// reject repeats within: past it every draw is taken (EdgeSeeds).
func SharedBudget(k int) int { return 32 * k }

// LinkEnds is the number of ends of a step of b positives with k
// negatives each in layout (none without positives).
func LinkEnds(b, k, layout int) int {
	switch {
	case b == 0:
		return 0
	case layout == NegShared:
		return 2*b + k
	case layout == NegInBatch:
		return 2 * b
	}
	return b * (2 + k)
}

// inBatchShift is how many positives on the j-th in-batch negative of a
// positive lies, of b (1 to b-1; 1 when b = 1).
func inBatchShift(j, b int) int { return 1 + j%max(b-1, 1) }

// NegativeAt is the position of positive i's j-th negative among the ends
// of a step of b positives with k negatives each in layout.
func NegativeAt(i, j, b, k, layout int) int {
	switch layout {
	case NegShared:
		return 2*b + j
	case NegInBatch:
		return b + (i+inBatchShift(j, b))%b
	}
	return 2*b + i*k + j
}

// InBatchOwner is the positive whose j-th negative (NegInBatch) is the
// destination of positive m, of b: NegativeAt's inverse.
func InBatchOwner(m, j, b int) int { return (m - inBatchShift(j, b)%b + b) % b }

// CheckNegatives checks the negatives per positive k and their layout.
func CheckNegatives(k, layout int) error {
	switch {
	case k < 0:
		return fmt.Errorf("k: %d negatives per positive, want >= 0", k)
	case layout != NegOwn && layout != NegShared && layout != NegInBatch:
		return fmt.Errorf("layout: %d, want NegOwn (%d), NegShared (%d) or NegInBatch (%d)", layout, NegOwn, NegShared, NegInBatch)
	case layout == NegShared && k > MaxShared:
		return fmt.Errorf("k: %d shared negatives, want at most %d", k, MaxShared)
	}
	return nil
}
