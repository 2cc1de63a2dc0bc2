package job

import (
	"fmt"
	"io"
	"time"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/rmat"
	"github.com/fanout-gnn/fanout/internal/quote"
	"github.com/fanout-gnn/fanout/train"
)

// LoadDataset opens src.Data or generates src.Preset in memory, saying so
// on log; progress, when set, shows the generation. A typed preset
// (hetero-tiny, mag-sim) is generated with its reverse relations.
func LoadDataset(src Source, threads int, log io.Writer, progress func(string) (func(string, int64, int64), func())) (*dataset.Dataset, error) {
	if src.Data != "" {
		ds, err := dataset.OpenWith(src.Data, src.Open)
		if err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		return ds, nil
	}
	p, err := rmat.Lookup(src.Preset)
	if err != nil {
		return nil, fmt.Errorf("--preset: %w", err)
	}
	if src.FeatDim < 0 {
		return nil, fmt.Errorf("feat-dim: %d, want a positive width", src.FeatDim)
	}
	if src.FeatDim > 0 {
		p.FeatDim = src.FeatDim
		p.Name = fmt.Sprintf("%s-f%d", p.Name, src.FeatDim)
	}
	seed := src.Seed
	if seed == 0 {
		seed = 1
	}
	start := time.Now()
	update, done := func(string, int64, int64) {}, func() {}
	if progress != nil {
		update, done = progress("generating " + p.Name)
	}
	if src.Labels == rmat.LabelsCommunity && p.Schema == nil {
		p.Name += "-community"
	}
	ds, err := rmat.Generate(p, rmat.Options{Seed: seed, Threads: threads, Progress: update, Labels: src.Labels})
	done()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "generated %s in %s: %d vertices, %d edges\n", p.Name,
		time.Since(start).Round(time.Millisecond), ds.NumVertices(), ds.NumEdges())
	return ds, nil
}

// load is LoadDataset of the job's source, readied for its task (prepare).
// A dataset made for link prediction alone (an OGB link dataset: one
// placeholder class) is refused for a node task, saying which task it has.
func (j *Job) load() (*dataset.Dataset, error) {
	src, err := j.hybridSource()
	if err != nil {
		return nil, err
	}
	ds, err := LoadDataset(src, j.Threads, j.Log, j.Progress)
	if err != nil {
		return nil, err
	}
	if j.Config.TaskName() != train.TaskLink && ds.Link != nil && ds.NumClasses < 2 {
		ds.Close()
		return nil, fmt.Errorf("dataset %s has a link-prediction task and no classes to predict: train it with --task link", ds.Name)
	}
	if err := j.prepare(ds); err != nil {
		ds.Close()
		return nil, err
	}
	return ds, nil
}

// ParseFeatureDType reads a --feature-dtype value.
func ParseFeatureDType(s string) (backend.DType, error) {
	switch s {
	case "float32", "":
		return backend.F32, nil
	case "bfloat16", "bf16":
		return backend.BF16, nil
	}
	return 0, fmt.Errorf("feature-dtype: %s, want float32 or bfloat16", quote.Quote(s))
}

// featureType is the job's feature type.
func (j *Job) featureType() (backend.DType, error) { return ParseFeatureDType(j.FeatureDType) }
