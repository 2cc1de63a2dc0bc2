package rmat

import (
	"fmt"
	"slices"
)

// splitSizes resolves the preset's train/valid/test sizes for `labelled`
// labelled vertices.
func splitSizes(p Preset, labelled int64) (train, valid, test int64, err error) {
	train, valid = p.NumTrain, p.NumValid
	if train == 0 {
		train = int64(p.TrainFrac * float64(labelled))
	}
	if valid == 0 {
		valid = int64(p.ValidFrac * float64(labelled))
	}
	rest := labelled - train - valid
	if rest < 0 {
		return 0, 0, 0, fmt.Errorf("preset %s: split %d train + %d valid exceeds the %d labelled vertices",
			p.Name, train, valid, labelled)
	}
	test = rest
	if p.NumTest > 0 {
		if p.NumTest > rest {
			return 0, 0, 0, fmt.Errorf("preset %s: %d test vertices requested, only %d labelled vertices left",
				p.Name, p.NumTest, rest)
		}
		test = p.NumTest
	}
	return train, valid, test, nil
}

// split shuffles the labelled vertices with a seeded generator and cuts
// train, valid and test from the front, in that order. Each set is returned
// sorted ascending.
func split(p Preset, labels []int32, seed uint64) (train, valid, test []int64, err error) {
	var ids []int64
	for v, c := range labels {
		if c >= 0 {
			ids = append(ids, int64(v))
		}
	}
	nt, nv, ns, err := splitSizes(p, int64(len(ids)))
	if err != nil {
		return nil, nil, nil, err
	}
	rng := newPCG(seed, streamSplit, 0)
	for i := len(ids) - 1; i > 0; i-- {
		j := below(rng.Uint64(), uint64(i+1))
		ids[i], ids[j] = ids[j], ids[i]
	}
	cut := func(lo, k int64) []int64 {
		s := slices.Clone(ids[lo : lo+k])
		slices.Sort(s)
		return s
	}
	return cut(0, nt), cut(nt, nv), cut(nt+nv, ns), nil
}
