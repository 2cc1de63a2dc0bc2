package dataset

// NormalizeFeatures replaces the features with a copy whose rows each sum
// to 1 in absolute value (rows of zeros stay zero), the usual preprocessing
// of bag-of-words features such as Planetoid's, and records the step in
// Preprocessing. The original slice (possibly memory-mapped) is not
// modified. Bfloat16 features are widened first, so the result is float32
// (round it again with RoundFeatures). A typed dataset's types with
// features are each normalized.
func (d *Dataset) NormalizeFeatures() {
	d.WidenFeatures()
	for i := range d.Types {
		t := &d.Types[i]
		if t.Features != nil {
			t.Features = normalizedRows(t.Features, t.FeatDim)
		}
	}
	if !d.Typed() {
		d.Features = normalizedRows(d.Features, d.FeatDim)
	}
	d.Preprocessing = append(d.Preprocessing, StepNormalizeFeatures)
}

// normalizedRows is a copy of the [rows, dim] matrix feat whose rows each
// sum to 1 in absolute value (rows of zeros stay zero).
func normalizedRows(feat []float32, dim int) []float32 {
	out := make([]float32, len(feat))
	for r := 0; r*dim < len(feat); r++ {
		row := feat[r*dim : (r+1)*dim]
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
			out[r*dim+j] = v * inv
		}
	}
	return out
}
