package main

import "flag"

// storedDType registers gen's and import's --feature-dtype: how the
// written dataset stores its features.
func storedDType(fs *flag.FlagSet) *string {
	return fs.String("feature-dtype", "float32", "how the dataset stores the features: float32, or bfloat16 (half the bytes on disk and in memory; each value rounded to nearest even after any other preprocessing, as training with --feature-dtype bfloat16 rounds float32 features)")
}
