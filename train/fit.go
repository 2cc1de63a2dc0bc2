package train

import "fmt"

// untilFits samples and grows until a sample fits its plan: sample returns
// the plan it sampled on and the live sizes it read (the host copy of the
// plan's SizeCounts, a group's largest; nil where the plan cannot
// overflow), and grow raises the plan (or replaces it) to sizes that
// overflowed. Each growth is at least the sizes that overflowed, so a few
// suffice; past maxGrowths the plan is taken to be stuck (a growth that
// raised nothing) and it fails with the last overflow. It returns the
// sizes of the sample that fitted.
func untilFits(what string, sample func() (*Plan, []int32, error), grow func(p *Plan, counts []int32) error) ([]int32, error) {
	for g := 0; ; g++ {
		p, counts, err := sample()
		if err != nil {
			return nil, err
		}
		if counts == nil {
			return nil, nil
		}
		over := p.Overflow(counts)
		if over == nil {
			return counts, nil
		}
		if g == maxGrowths {
			return nil, fmt.Errorf("%s: still overflows after %d growths of the plan: %w", what, g, over)
		}
		if err := grow(p, counts); err != nil {
			return nil, err
		}
	}
}

// maxGrowths bounds the growths of one sample: a growth holds what
// overflowed, so only sizes that a growth left as they were (a fault) reach
// it.
const maxGrowths = 32
