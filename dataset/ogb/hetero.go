package ogb

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// OGB's typed raw layout (ogbn-mag): the vertex counts per type, a folder
// per relation named src___rel___dst, per-type feature and label folders.
const (
	nodeDictFile  = "num-node-dict"
	relationsDir  = "relations"
	nodeFeatDir   = "node-feat"
	nodeLabelDir  = "node-label"
	tripletSep    = "___"
	maxDictBytes  = 1 << 20
	maxTypeFolder = 4096 // folders listed under relations/ and the per-type folders
)

// isTyped reports whether raw holds the typed layout (num-node-dict).
func isTyped(raw string) bool { return hasText(raw, nodeDictFile) }

// importTyped reads OGB's typed raw layout: raw/num-node-dict.csv.gz (a
// header of type names over one row of counts), each relation's
// raw/relations/<src>___<rel>___<dst>/edge.csv.gz ("src,dst" lines of
// type-local ids; num-edge-list.csv.gz beside it checked where present),
// raw/node-feat/<type>/node-feat.csv.gz for the types that have features,
// raw/node-label/<target>/node-label.csv.gz and the target's split
// split/<name>/<target>/{train,valid,test}.csv.gz. Types are in the order
// OGB sorts them (by name), relations by their folder's name; each
// relation's graph drops repeats (and self loops within a type), and gets
// its reverse unless opt.NoReverse (dataset.BuildRelations).
func importTyped(root, raw string, opt Options) (*dataset.Dataset, error) {
	if opt.Symmetrize {
		return nil, fmt.Errorf("%s: a typed dataset's relations get their reverses (rev_<relation>) unless --no-reverse, instead of --symmetrize", raw)
	}
	types, err := readNodeDict(raw, opt)
	if err != nil {
		return nil, err
	}
	d := &dataset.Dataset{Types: types, Name: opt.name(root)}
	d.Source = "ogb " + d.Name
	if d.Target, err = labelledType(raw, types, opt.Target); err != nil {
		return nil, err
	}
	if err := readTypeFeatures(raw, d.Types, opt); err != nil {
		return nil, err
	}
	target := &d.Types[d.Target]
	d.FeatDim = target.FeatDim
	p, t, err := newParser(filepath.Join(raw, nodeLabelDir, target.Name), "node-label", opt)
	if err != nil {
		return nil, err
	}
	p.counts = nodeDictFile
	d.Labels, d.NumClasses, err = p.labels(t.r, target.Count)
	t.Close()
	if err != nil {
		return nil, err
	}
	if d.Relations, err = readRelations(raw, d.Types, opt); err != nil {
		return nil, err
	}
	if d.Train, d.Valid, d.Test, err = readSplit(root, target.Name, target.Count, d.Labels, opt); err != nil {
		return nil, err
	}
	d.Preprocessing = dataset.TypedSteps(!opt.NoReverse)
	return d, nil
}

// readNodeDict reads num-node-dict: the types, by name, with their counts.
func readNodeDict(raw string, opt Options) ([]dataset.VertexType, error) {
	t, err := openText(raw, nodeDictFile, nil)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	r := csv.NewReader(io.LimitReader(t.r, maxDictBytes))
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.path, err)
	}
	if len(rows) != 2 {
		return nil, fmt.Errorf("%s: %d lines, want a header of type names and one row of counts (datasets of several graphs are not supported)", t.path, len(rows))
	}
	var types []dataset.VertexType
	for i, name := range rows[0] {
		if err := dataset.CheckName(fmt.Sprintf("%s: type %d", t.path, i+1), name); err != nil {
			return nil, err
		}
		n, ok := parseInt([]byte(rows[1][i]))
		if !ok || n < 1 || n > dataset.MaxTypeVertices {
			return nil, fmt.Errorf("%s: the count of %s is %s, want 1 to %d", t.path, name, quote.Quote(rows[1][i]), dataset.MaxTypeVertices)
		}
		if slices.ContainsFunc(types, func(v dataset.VertexType) bool { return v.Name == name }) {
			return nil, fmt.Errorf("%s: type %s is listed twice", t.path, name)
		}
		types = append(types, dataset.VertexType{Name: name, Count: n})
	}
	slices.SortFunc(types, func(a, b dataset.VertexType) int { return strings.Compare(a.Name, b.Name) })
	return types, nil
}

// subfolders lists the folders in dir, sorted; none where dir is absent.
func subfolders(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	if len(out) > maxTypeFolder {
		return nil, fmt.Errorf("%s: %d folders, more than the %d types or relations a dataset may have", dir, len(out), maxTypeFolder)
	}
	return out, nil
}

// labelledType picks the target: the type named want, or the one type
// with a folder under node-label.
func labelledType(raw string, types []dataset.VertexType, want string) (int, error) {
	dir := filepath.Join(raw, nodeLabelDir)
	labelled, err := subfolders(dir)
	if err != nil {
		return 0, err
	}
	if want == "" {
		if len(labelled) != 1 {
			return 0, fmt.Errorf("%s: %d labelled types (%s): name the target with --target", dir, len(labelled), quote.Quote(strings.Join(labelled, ", ")))
		}
		want = labelled[0]
	}
	i := slices.IndexFunc(types, func(t dataset.VertexType) bool { return t.Name == want })
	if i < 0 || !slices.Contains(labelled, want) {
		return 0, fmt.Errorf("%s: no labels of the type %s (labelled: %s)", dir, quote.Quote(want), quote.Quote(strings.Join(labelled, ", ")))
	}
	return i, nil
}

// readTypeFeatures reads node-feat/<type>/node-feat.csv.gz of each type
// that has one; a folder of a type num-node-dict lacks is an error.
func readTypeFeatures(raw string, types []dataset.VertexType, opt Options) error {
	dir := filepath.Join(raw, nodeFeatDir)
	names, err := subfolders(dir)
	if err != nil {
		return err
	}
	for _, name := range names {
		i := slices.IndexFunc(types, func(t dataset.VertexType) bool { return t.Name == name })
		if i < 0 {
			return fmt.Errorf("%s: features of the type %s, which %s does not list", dir, quote.Quote(name), nodeDictFile)
		}
		if !hasText(filepath.Join(dir, name), "node-feat") {
			continue
		}
		p, t, err := newParser(filepath.Join(dir, name), "node-feat", opt)
		if err != nil {
			return err
		}
		p.counts = nodeDictFile
		types[i].Features, types[i].FeatDim, err = p.features(t.r, types[i].Count)
		t.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// readRelations reads every relations/<src>___<rel>___<dst> folder's
// edges and builds the relations.
func readRelations(raw string, types []dataset.VertexType, opt Options) ([]dataset.Relation, error) {
	dir := filepath.Join(raw, relationsDir)
	folders, err := subfolders(dir)
	if err != nil {
		return nil, err
	}
	if len(folders) == 0 {
		return nil, fmt.Errorf("%s: no relation folders (want e.g. author%swrites%spaper/edge.csv.gz)", dir, tripletSep, tripletSep)
	}
	var lists []dataset.EdgeList
	for _, f := range folders {
		l, err := readRelation(filepath.Join(dir, f), f, types, opt)
		if err != nil {
			return nil, err
		}
		lists = append(lists, l)
	}
	if err := dataset.CheckFeatureless(types, lists); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(raw, nodeDictFile+".csv.gz"), err)
	}
	return dataset.BuildRelations(types, lists, dataset.RelationOptions{Reverse: !opt.NoReverse, Threads: opt.Threads, Progress: opt.Progress})
}

// readRelation reads one relation's folder, named src___rel___dst.
func readRelation(dir, folder string, types []dataset.VertexType, opt Options) (dataset.EdgeList, error) {
	parts := strings.Split(folder, tripletSep)
	var l dataset.EdgeList
	if len(parts) != 3 {
		return l, fmt.Errorf("%s: want a folder named source%srelation%sdestination", dir, tripletSep, tripletSep)
	}
	find := func(name string) int {
		return slices.IndexFunc(types, func(t dataset.VertexType) bool { return t.Name == name })
	}
	l.Name, l.Src, l.Dst = parts[1], find(parts[0]), find(parts[2])
	if l.Src < 0 || l.Dst < 0 {
		return l, fmt.Errorf("%s: a relation between types that %s does not list", dir, nodeDictFile)
	}
	if err := dataset.CheckName(dir+": the relation", l.Name); err != nil {
		return l, err
	}
	m := int64(-1)
	if hasText(dir, "num-edge-list") {
		var err error
		if m, err = readCount(dir, "num-edge-list", opt); err != nil {
			return l, err
		}
	}
	p, t, err := newParser(dir, "edge", opt)
	if err != nil {
		return l, err
	}
	defer t.Close()
	l.From, l.To, err = p.edgesBetween(t.r, types[l.Src].Count, types[l.Dst].Count, m)
	return l, err
}
