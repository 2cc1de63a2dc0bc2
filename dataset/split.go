package dataset

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fanout-gnn/fanout/rng"
)

// ErrSplitTooLarge reports split sizes larger than the labelled vertices.
var ErrSplitTooLarge = errors.New("choose smaller split sizes")

// SplitStream is the Philox stream of dataset splits (Step and Epoch 0).
const SplitStream = 255

// SplitOptions are the sizes and seed of a drawn per-class split. Zero
// fields take the defaults of Shchur et al.: 20 training vertices per
// class, 500 validation and 1,000 test vertices.
type SplitOptions struct {
	Seed          uint64 // seed of the split (Philox, stream SplitStream)
	TrainPerClass int    // training vertices drawn per class; 0 means 20
	Valid         int    // validation vertices; 0 means 500
	Test          int    // test vertices; 0 means 1000
}

// Default split sizes.
const (
	DefaultTrainPerClass = 20
	DefaultValid         = 500
	DefaultTest          = 1000
)

// Sizes are o's training vertices per class, validation and test
// vertices, each zero replaced by its default.
func (o SplitOptions) Sizes() (perClass, valid, test int) {
	return orDefault(o.TrainPerClass, DefaultTrainPerClass), orDefault(o.Valid, DefaultValid), orDefault(o.Test, DefaultTest)
}

// String describes the split for a manifest's source: "per-class split:
// 20 per class, 500 valid, 1000 test; seed 1".
func (o SplitOptions) String() string {
	perClass, valid, test := o.Sizes()
	return fmt.Sprintf("per-class split: %d per class, %d valid, %d test; seed %d", perClass, valid, test, o.Seed)
}

// Split draws a per-class split from labels (-1 = unlabelled, otherwise a
// class in [0, classes)): it shuffles all vertex ids with a Fisher-Yates
// shuffle driven by Philox (seed opt.Seed, stream SplitStream; step i, from
// n-1 down to 1, swaps position i with rng.Uniform(Word(i, 0), i+1)), then
// walks the shuffled order: a labelled vertex goes to train while its class
// has fewer than TrainPerClass there, the other labelled vertices queue up
// for validation (the first Valid) and test (the next Test). A class with
// fewer vertices than TrainPerClass gives them all to train. The result
// depends only on labels and opt; each split is returned sorted.
func Split(labels []int32, classes int, opt SplitOptions) (train, valid, test []int64, err error) {
	perClass, nValid, nTest := opt.Sizes()
	if perClass < 0 || nValid < 0 || nTest < 0 {
		return nil, nil, nil, fmt.Errorf("split sizes must not be negative (train per class %d, valid %d, test %d)", perClass, nValid, nTest)
	}
	if int64(len(labels)) > 1<<32-1 {
		return nil, nil, nil, fmt.Errorf("%d vertices: too many to split", len(labels))
	}
	order := shuffled(len(labels), opt.Seed)
	count := map[int32]int{}
	var rest []int64
	for _, v := range order {
		c := labels[v]
		if c < 0 {
			continue
		}
		if int(c) >= classes {
			return nil, nil, nil, fmt.Errorf("label %d of vertex %d is outside [0, %d)", c, v, classes)
		}
		if count[c] < perClass {
			count[c]++
			train = append(train, int64(v))
		} else {
			rest = append(rest, int64(v))
		}
	}
	if len(train) == 0 {
		return nil, nil, nil, fmt.Errorf("no labelled vertices to train on")
	}
	if len(rest) < nValid+nTest {
		return nil, nil, nil, fmt.Errorf("only %d labelled vertices remain after %d for training; the split needs %d validation + %d test: %w",
			len(rest), len(train), nValid, nTest, ErrSplitTooLarge)
	}
	valid = slices.Clone(rest[:nValid])
	test = slices.Clone(rest[nValid : nValid+nTest])
	slices.Sort(train)
	slices.Sort(valid)
	slices.Sort(test)
	return train, valid, test, nil
}

// orDefault returns v, or def when v is 0.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// shuffled returns a seeded permutation of [0, n).
func shuffled(n int, seed uint64) []uint32 {
	p := make([]uint32, n)
	for i := range p {
		p[i] = uint32(i)
	}
	key := rng.Key{Seed: seed, Stream: SplitStream}
	for i := n - 1; i > 0; i-- {
		j := rng.Uniform(key.Word(uint32(i), 0), uint32(i+1))
		p[i], p[j] = p[j], p[i]
	}
	return p
}
