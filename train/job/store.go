package job

import (
	"context"
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/linksplit"
)

// Store is how gen and import store a dataset they made.
type Store struct {
	Out       string
	Src       string // what was imported, for messages ("" for a generated preset: its features are checked already)
	Normalize bool   // scale each feature row to sum 1 (import's --normalize-features)
	DType     string // --feature-dtype: float32 or bfloat16
	// Link splits the edges into a link-prediction task (--link-split);
	// nil: none.
	Link *linksplit.Options
}

// Stored is what StoreDataset wrote: the parts of gen's and import's last
// line.
type Stored struct {
	Link     string // ", link task of ..." or ""
	Features string // "float32 features, 14.8 MiB"
}

// StoreDataset stores ds as s says: it checks an import's features,
// normalizes them where asked, splits off the link task, converts the
// features to the stored type and writes the dataset (WriteDataset: a
// done ctx removes what it wrote and returns ErrInterrupted).
func StoreDataset(ctx context.Context, ds *dataset.Dataset, s Store, log io.Writer) (Stored, error) {
	var out Stored
	if ctx.Err() != nil {
		return out, InterruptedWrite(s.Out, log)
	}
	if s.Src != "" {
		if err := dataset.CheckFeatures(ds.Features, ds.FeatDim); err != nil {
			return out, fmt.Errorf("%s: features: %w", s.Src, err)
		}
	}
	if s.Normalize {
		ds.NormalizeFeatures()
	}
	if s.Link != nil && ds.Link != nil {
		return out, fmt.Errorf("%s: --link-split: the dataset comes with its own link task (%d training edges)", s.Src, dataset.Pairs(ds.Link.Train))
	}
	if s.Link != nil {
		if err := linksplit.Apply(ds, *s.Link); err != nil {
			return out, err
		}
	}
	if l := ds.Link; l != nil {
		out.Link = fmt.Sprintf(", link task of %d/%d/%d train/valid/test edges, %d fixed negatives per held-out edge",
			dataset.Pairs(l.Train), dataset.Pairs(l.Valid), dataset.Pairs(l.Test), l.Negatives)
	}
	dt, err := ParseFeatureDType(s.DType)
	if err != nil {
		return out, err
	}
	if dt == backend.BF16 {
		ds.RoundFeatures()
	}
	out.Features = fmt.Sprintf("%s features, %.1f MiB", ds.FeatureDType(), float64(ds.FeatureBytes())/(1<<20))
	return out, WriteDataset(ctx, s.Out, ds, log)
}
