package main

import (
	"flag"
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/train/job"
)

// storedDType registers gen's and import's --feature-dtype: how the
// written dataset stores its features.
func storedDType(fs *flag.FlagSet) *string {
	return fs.String("feature-dtype", "float32", "how the dataset stores the features: float32, or bfloat16 (half the bytes on disk and in memory; each value rounded to nearest even after any other preprocessing, as training with --feature-dtype bfloat16 rounds float32 features)")
}

// storeAs rounds ds's features to bfloat16 when s (a --feature-dtype
// value) asks for it, and says what the dataset will store.
func storeAs(ds *dataset.Dataset, s string) (string, error) {
	dt, err := job.ParseFeatureDType(s)
	if err != nil {
		return "", err
	}
	if dt == backend.BF16 {
		ds.RoundFeatures()
	}
	return fmt.Sprintf("%s features, %.1f MiB", ds.FeatureDType(), float64(ds.FeatureBytes())/(1<<20)), nil
}
