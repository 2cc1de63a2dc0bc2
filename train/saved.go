package train

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/fanout-gnn/fanout/checkpoint"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/nn"
)

// Saved is a checkpoint file with its configurations decoded: the run's
// settings and the model's.
type Saved struct {
	File   *checkpoint.Checkpoint
	Config Config
	Model  nn.Config
}

// LoadSaved reads a checkpoint file (checkpoint.Load) and decodes its
// configurations. Errors name the file.
func LoadSaved(path string) (*Saved, error) {
	c, err := checkpoint.Load(path)
	if err != nil {
		return nil, err
	}
	return DecodeSaved(path, c)
}

// DecodeSaved decodes the configurations of checkpoint c, read from path.
func DecodeSaved(path string, c *checkpoint.Checkpoint) (*Saved, error) {
	s := &Saved{File: c}
	if err := json.Unmarshal(c.Config, &s.Config); err != nil {
		return nil, fmt.Errorf("%s: the training configuration: %w", path, err)
	}
	if err := json.Unmarshal(c.Model, &s.Model); err != nil {
		return nil, fmt.Errorf("%s: the model's configuration: %w", path, err)
	}
	return s, nil
}

// Weights returns parameter i's weights (row-major float32).
func (s *Saved) Weights(i int) []float32 { return s.File.Data[i][0] }

// Fingerprint describes ds for a checkpoint: its name, sizes and a hash of
// its split.
func Fingerprint(ds *dataset.Dataset) checkpoint.DatasetInfo {
	return checkpoint.DatasetInfo{Name: ds.Name, Vertices: ds.NumVertices(), Edges: ds.NumEdges(),
		FeatDim: ds.FeatDim, Classes: ds.NumClasses, SplitHash: checkpoint.SplitHash(ds.Train, ds.Valid, ds.Test)}
}

// Differences names the fields of two values of one struct type that
// differ, as "hidden 128 (was 64), lr 0.01 (was 0.003)", each by its JSON
// name (a nested struct's fields as "link.negatives"), skipping the names
// in skip; "" when they agree.
func Differences(was, now any, skip ...string) string {
	var out []string
	diffFields(reflect.ValueOf(was), reflect.ValueOf(now), "", skip, &out)
	return strings.Join(out, ", ")
}

func diffFields(a, b reflect.Value, prefix string, skip []string, out *[]string) {
	for i := range a.NumField() {
		f := a.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			name = strings.ToLower(f.Name)
		}
		name = prefix + name
		if slices.Contains(skip, name) || !f.IsExported() {
			continue
		}
		x, y := a.Field(i), b.Field(i)
		if x.Kind() == reflect.Struct {
			diffFields(x, y, name+".", skip, out)
			continue
		}
		if !reflect.DeepEqual(x.Interface(), y.Interface()) {
			*out = append(*out, fmt.Sprintf("%s %v (was %v)", name, show(y), show(x)))
		}
	}
}

// show renders a setting's value for Differences.
func show(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case string:
		return q(x)
	case []int:
		return FormatFanouts(x)
	}
	return fmt.Sprint(v.Interface())
}
