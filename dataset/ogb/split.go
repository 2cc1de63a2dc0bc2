package ogb

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fanout-gnn/fanout/internal/quote"
)

// readSplit reads split/<name>/{train,valid,test}.csv.gz under root (of a
// typed folder, split/<name>/<target>/) and checks that every listed vertex
// of the n is labelled.
func readSplit(root, target string, n int64, labels []int32, opt Options) (train, valid, test []int64, err error) {
	dir, err := splitDir(root, opt.Split)
	if err != nil {
		return nil, nil, nil, err
	}
	dir = filepath.Join(dir, target)
	var out [3][]int64
	for i, part := range []string{"train", "valid", "test"} {
		p, t, err := newParser(dir, part, opt)
		if err != nil {
			return nil, nil, nil, err
		}
		ids, err := p.ids(t.r, n)
		t.Close()
		if err != nil {
			return nil, nil, nil, err
		}
		if len(ids) == 0 {
			return nil, nil, nil, fmt.Errorf("%s: the %s split is empty", t.path, part)
		}
		seen := make([]uint64, (n+63)/64)
		for k, v := range ids {
			if labels[v] < 0 {
				return nil, nil, nil, fmt.Errorf("%s: line %d: vertex %d has no label", t.path, k+1, v)
			}
			if seen[v/64]&(1<<(v%64)) != 0 {
				return nil, nil, nil, fmt.Errorf("%s: line %d: vertex %d is listed twice", t.path, k+1, v)
			}
			seen[v/64] |= 1 << (v % 64)
		}
		out[i] = ids
	}
	return out[0], out[1], out[2], nil
}

// splitDir picks the split folder: split/<name>, or the only folder in split/.
func splitDir(root, name string) (string, error) {
	base := filepath.Join(root, "split")
	if name != "" {
		dir := filepath.Join(base, name)
		st, err := os.Stat(dir)
		if !filepath.IsLocal(name) || strings.ContainsAny(name, `/\`) || err != nil || !st.IsDir() {
			return "", fmt.Errorf("%s: split folder %s not found (want the name of a folder there)", base, quote.Quote(name))
		}
		return dir, nil
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		return "", fmt.Errorf("reading the split: %w", err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	switch len(dirs) {
	case 0:
		return "", fmt.Errorf("%s: no split folder (want e.g. split/time/train.csv.gz)", base)
	case 1:
		return filepath.Join(base, dirs[0]), nil
	}
	return "", fmt.Errorf("%s: several splits (%s): choose one", base, quote.Quote(strings.Join(dirs, ", ")))
}
