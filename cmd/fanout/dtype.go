package main

import (
	"flag"
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
)

// parseFeatureDType reads a --feature-dtype value: float32 (also "") or
// bfloat16 (bf16).
func parseFeatureDType(s string) (backend.DType, error) {
	switch s {
	case "float32", "":
		return backend.F32, nil
	case "bfloat16", "bf16":
		return backend.BF16, nil
	}
	return 0, fmt.Errorf("feature-dtype: %s, want float32 or bfloat16", quoted(s))
}

// storedDType registers gen's and import's --feature-dtype: how the
// written dataset stores its features.
func storedDType(fs *flag.FlagSet) *string {
	return fs.String("feature-dtype", "float32", "how the dataset stores the features: float32, or bfloat16 (half the bytes on disk and in memory; each value rounded to nearest even after any other preprocessing, as training with --feature-dtype bfloat16 rounds float32 features)")
}

// storeAs rounds ds's features to bfloat16 when s (a --feature-dtype
// value) asks for it, and says what the dataset will store.
func storeAs(ds *dataset.Dataset, s string) (string, error) {
	dt, err := parseFeatureDType(s)
	if err != nil {
		return "", err
	}
	if dt == backend.BF16 {
		ds.RoundFeatures()
	}
	return fmt.Sprintf("%s features, %.1f MiB", ds.FeatureDType(), float64(ds.FeatureBytes())/(1<<20)), nil
}
