package dataset

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
)

// checkSplit checks sizes, disjointness, labels and per-class train counts.
func checkSplit(t *testing.T, labels []int32, train, valid, test []int64, perClass, nValid, nTest int) {
	t.Helper()
	if len(valid) != nValid || len(test) != nTest {
		t.Errorf("valid %d, test %d; want %d, %d", len(valid), len(test), nValid, nTest)
	}
	seen := map[int64]bool{}
	count := map[int32]int{}
	for _, s := range [][]int64{train, valid, test} {
		if !slices.IsSorted(s) {
			t.Errorf("split %v is not sorted", s)
		}
		for _, v := range s {
			if seen[v] {
				t.Errorf("vertex %d is in two splits", v)
			}
			seen[v] = true
			if labels[v] < 0 {
				t.Errorf("unlabelled vertex %d in a split", v)
			}
		}
	}
	for _, v := range train {
		count[labels[v]]++
	}
	for c, k := range count {
		if k != perClass {
			t.Errorf("class %d has %d training vertices, want %d", c, k, perClass)
		}
	}
}

// TestSplitDrawsAsBefore holds Split to the draws it made when it lived in
// the npz importer: a dataset imported again with the same seed gets the
// same split. The small case lists the split; the large ones (defaults,
// three seeds) compare a SHA-256 of the three sets, each as its length
// then its ids, little-endian int64.
func TestSplitDrawsAsBefore(t *testing.T) {
	small := make([]int32, 60)
	for i := range small {
		small[i] = int32(i*7%11) % 4
		if i%9 == 4 {
			small[i] = -1
		}
	}
	train, valid, test, err := Split(small, 4, SplitOptions{Seed: 7, TrainPerClass: 3, Valid: 5, Test: 6})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(train, []int64{3, 6, 9, 10, 20, 26, 28, 34, 35, 51, 56, 59}) ||
		!slices.Equal(valid, []int64{5, 15, 21, 25, 37}) || !slices.Equal(test, []int64{11, 33, 36, 43, 47, 55}) {
		t.Errorf("seed 7: split %v %v %v differs from the recorded one", train, valid, test)
	}
	big := make([]int32, 20000)
	for i := range big {
		big[i] = int32(uint32(i*2654435761) >> 7 % 13)
		if i%17 == 3 {
			big[i] = -1
		}
	}
	for _, c := range []struct {
		seed uint64
		hash string
	}{
		{0, "6c49007b6b70278fc496a09ac91d55d43673b7be94afde1af1713cca1d93686d"},
		{1, "fd325f0c684ae483ea98ea356007dce8afd75e23719693a990f1bbe185508dc6"},
		{12345, "4d405cdb921d4374cb76b6f65148488ddaeee12f6925d6ad06f049f79ec2fd03"},
	} {
		train, valid, test, err := Split(big, 13, SplitOptions{Seed: c.seed})
		if err != nil {
			t.Fatal(err)
		}
		checkSplit(t, big, train, valid, test, DefaultTrainPerClass, DefaultValid, DefaultTest)
		h := sha256.New()
		for _, s := range [][]int64{train, valid, test} {
			h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(s))))
			for _, v := range s {
				h.Write(binary.LittleEndian.AppendUint64(nil, uint64(v)))
			}
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != c.hash {
			t.Errorf("seed %d: split hash %s, recorded %s", c.seed, got, c.hash)
		}
	}
}

func TestSplitOptionsString(t *testing.T) {
	if got, want := (SplitOptions{Seed: 3, Valid: 7}).String(), "per-class split: 20 per class, 7 valid, 1000 test; seed 3"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestSplitDefaultsAndSeeds(t *testing.T) {
	labels := make([]int32, 3000)
	for v := range labels {
		labels[v] = int32(v % 7)
	}
	labels[5] = -1
	train, valid, test, err := Split(labels, 7, SplitOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(train) != 7*DefaultTrainPerClass {
		t.Errorf("train %d, want %d", len(train), 7*DefaultTrainPerClass)
	}
	checkSplit(t, labels, train, valid, test, DefaultTrainPerClass, DefaultValid, DefaultTest)
	train2, valid2, test2, _ := Split(labels, 7, SplitOptions{Seed: 1})
	if !slices.Equal(train, train2) || !slices.Equal(valid, valid2) || !slices.Equal(test, test2) {
		t.Error("the same seed gave a different split")
	}
	train3, _, _, _ := Split(labels, 7, SplitOptions{Seed: 2})
	if slices.Equal(train, train3) {
		t.Error("seeds 1 and 2 gave the same training set")
	}
	if _, _, _, err := Split(labels[:600], 7, SplitOptions{}); err == nil || !strings.Contains(err.Error(), "needs 500 validation + 1000 test") {
		t.Errorf("too few vertices: %v", err)
	}
}

func TestShuffleIsPermutation(t *testing.T) {
	p := shuffled(1000, 3)
	seen := make([]bool, 1000)
	moved := 0
	for i, v := range p {
		if seen[v] {
			t.Fatalf("%d appears twice", v)
		}
		seen[v] = true
		if int(v) != i {
			moved++
		}
	}
	if moved < 900 {
		t.Errorf("only %d of 1000 positions moved", moved)
	}
}
