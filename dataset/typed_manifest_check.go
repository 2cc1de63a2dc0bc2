package dataset

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fanout-gnn/fanout/internal/quote"
)

// check validates a typed manifest's fields on their own: each in its
// range or among its known values, the names names, the counts consistent
// with each other.
func (m TypedManifest) check() error {
	if m.FormatVersion != TypedFormatVersion {
		return fmt.Errorf("format_version is %d, want %d", m.FormatVersion, TypedFormatVersion)
	}
	if err := checkText("name", m.Name, maxNameBytes); err != nil {
		return err
	}
	if err := checkText("source", m.Source, maxTextBytes); err != nil {
		return err
	}
	if err := checkSteps(m.Preprocessing); err != nil {
		return err
	}
	if _, err := ParseFeatureDType(m.FeatureDType); err != nil {
		return err
	}
	if err := m.checkTypes(); err != nil {
		return err
	}
	if err := m.checkRelations(); err != nil {
		return err
	}
	return m.checkTarget()
}

// checkSteps checks the preprocessing entries: steps' names on one line.
func checkSteps(steps []string) error {
	for i, p := range steps {
		if strings.TrimSpace(p) == "" {
			return fmt.Errorf("preprocessing entry %d is %s, want a step's name", i+1, quote.Quote(p))
		}
		if err := checkText(fmt.Sprintf("preprocessing entry %d", i+1), p, maxTextBytes); err != nil {
			return err
		}
	}
	return nil
}

// checkTypes checks the types: 1 to MaxTypes, named once each, counts and
// widths in range.
func (m TypedManifest) checkTypes() error {
	if len(m.Types) == 0 {
		return errors.New("types is empty or missing: a typed dataset has at least one vertex type")
	}
	if len(m.Types) > MaxTypes {
		return fmt.Errorf("types lists %d types, more than the %d this format allows", len(m.Types), MaxTypes)
	}
	seen := map[string]int{}
	var total int64
	for i, t := range m.Types {
		field := fmt.Sprintf("types[%d]", i)
		if err := CheckName(field+".name", t.Name); err != nil {
			return err
		}
		if j, ok := seen[t.Name]; ok {
			return fmt.Errorf("%s.name %s repeats types[%d]'s", field, quote.Quote(t.Name), j)
		}
		seen[t.Name] = i
		switch {
		case t.Count < 1 || t.Count > MaxTypeVertices:
			return fmt.Errorf("%s (%s): count is %d, want 1 to %d", field, t.Name, t.Count, MaxTypeVertices)
		case t.FeatDim < 0 || t.FeatDim > MaxFeatDim:
			return fmt.Errorf("%s (%s): feat_dim is %d, want 0 (no features) to %d", field, t.Name, t.FeatDim, MaxFeatDim)
		case t.FeatDim > 0 && t.Count > maxFeatValues/int64(t.FeatDim):
			return fmt.Errorf("%s (%s): count × feat_dim = %d × %d is more than the %d features this format allows", field, t.Name, t.Count, t.FeatDim, int64(maxFeatValues))
		}
		if err := checkNodeIDsKey(t.NodeIDs); err != nil {
			return fmt.Errorf("%s (%s): %w", field, t.Name, err)
		}
		total += t.Count
	}
	if total > MaxNodes {
		return fmt.Errorf("the types hold %d vertices, more than the %d this format allows", total, int64(MaxNodes))
	}
	return nil
}

// checkRelations checks the relations: 1 to MaxRelations, between listed
// types, each (src, name, dst) once, edge counts in range.
func (m TypedManifest) checkRelations() error {
	if len(m.Relations) == 0 {
		return errors.New("relations is empty or missing: a typed dataset has at least one relation")
	}
	if len(m.Relations) > MaxRelations {
		return fmt.Errorf("relations lists %d relations, more than the %d this format allows", len(m.Relations), MaxRelations)
	}
	seen := map[[3]string]int{}
	for i, r := range m.Relations {
		field := fmt.Sprintf("relations[%d]", i)
		if err := CheckName(field+".name", r.Name); err != nil {
			return err
		}
		for _, end := range []struct{ key, name string }{{"src", r.Src}, {"dst", r.Dst}} {
			if m.typeIndex(end.name) < 0 {
				return fmt.Errorf("%s (%s).%s is %s, which types does not list", field, r.Name, end.key, quote.Quote(end.name))
			}
		}
		k := [3]string{r.Src, r.Name, r.Dst}
		if j, ok := seen[k]; ok {
			return fmt.Errorf("%s repeats relations[%d], (%s, %s, %s)", field, j, r.Src, r.Name, r.Dst)
		}
		seen[k] = i
		if r.NumEdges < 0 || r.NumEdges > MaxEdges {
			return fmt.Errorf("%s (%s): num_edges is %d, want 0 to %d", field, r.Name, r.NumEdges, int64(MaxEdges))
		}
	}
	return nil
}

// checkTarget checks the target type, the classes and the split sizes.
func (m TypedManifest) checkTarget() error {
	t := m.typeIndex(m.Target)
	if t < 0 {
		return fmt.Errorf("target is %s, want the name of a type (the labelled one)", quote.Quote(m.Target))
	}
	if m.NumClasses < 0 || m.NumClasses > MaxClasses {
		return fmt.Errorf("num_classes is %d, want 1 to %d", m.NumClasses, MaxClasses)
	}
	n := m.Types[t].Count
	for _, f := range []struct {
		name   string
		v, top int64
	}{{"num_train", m.NumTrain, n}, {"num_valid", m.NumValid, n}, {"num_test", m.NumTest, n}} {
		if f.v < 0 {
			return fmt.Errorf("%s is negative (%d)", f.name, f.v)
		}
		if f.v > f.top {
			return fmt.Errorf("%s is %d, more than %d (the target %s has %d vertices)", f.name, f.v, f.top, m.Target, n)
		}
	}
	switch {
	case m.NumClasses == 0:
		return errors.New("num_classes is 0 or missing")
	case m.NumTrain == 0:
		return errors.New("num_train is 0 or missing: the train split must not be empty")
	case m.NumTrain+m.NumValid+m.NumTest > n:
		return fmt.Errorf("num_train + num_valid + num_test = %d + %d + %d exceeds the %d vertices of the target %s: a vertex belongs to one split at most",
			m.NumTrain, m.NumValid, m.NumTest, n, m.Target)
	}
	return nil
}

// typeIndex is the index of the type named name, or -1.
func (m TypedManifest) typeIndex(name string) int {
	for i, t := range m.Types {
		if t.Name == name {
			return i
		}
	}
	return -1
}
