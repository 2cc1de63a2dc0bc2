package dataset

// NormalizeFeatures replaces the features with a copy whose rows each sum
// to 1 in absolute value (rows of zeros stay zero), the usual preprocessing
// of bag-of-words features such as Planetoid's, and records the step in
// Preprocessing. The original slice (possibly memory-mapped) is not
// modified. Bfloat16 features are widened first, so the result is float32
// (round it again with RoundFeatures).
func (d *Dataset) NormalizeFeatures() {
	d.WidenFeatures()
	out := make([]float32, len(d.Features))
	for r := 0; r*d.FeatDim < len(d.Features); r++ {
		row := d.Features[r*d.FeatDim : (r+1)*d.FeatDim]
		var sum float64
		for _, v := range row {
			if v < 0 {
				sum -= float64(v)
			} else {
				sum += float64(v)
			}
		}
		if sum == 0 {
			continue
		}
		inv := float32(1 / sum)
		for j, v := range row {
			out[r*d.FeatDim+j] = v * inv
		}
	}
	d.Features = out
	d.Preprocessing = append(d.Preprocessing, StepNormalizeFeatures)
}
