package rng

import "math"

// twoPow24 is 2^24, the number of distinct unit floats UnitFloat produces.
const twoPow24 = 1 << 24

// UnitFloat maps a word to a float32 in [0, 1): float32(w>>8) * 2^-24. The
// result is exact (24 significant bits), so identical on every device.
func UnitFloat(w uint32) float32 {
	return float32(w>>8) * (1.0 / twoPow24)
}

// UniformFloat maps a word to a float32 in [lo, hi) (for lo < hi, up to
// rounding at hi): lo + (hi-lo)*UnitFloat(w), each operation rounded to
// float32 on its own (no fused multiply-add).
func UniformFloat(w uint32, lo, hi float32) float32 {
	span := float32(hi - lo)
	scaled := float32(span * UnitFloat(w))
	return float32(lo + scaled)
}

// Float32 is the uniform float in [0, 1) of element (row, col):
// UnitFloat(k.Word(row, col)).
func (k Key) Float32(row, col uint32) float32 {
	return UnitFloat(k.Word(row, col))
}

// Normal is the standard normal draw of element (row, col) by Box-Muller:
// with w = Words(row, col/4) and q = col%4, the pair (a, b) = (w[q&2],
// w[q&2+1]) gives u1 = (float64(a>>8)+1)·2^-24 in (0, 1] and
// u2 = float64(b>>8)·2^-24 in [0, 1); the value is sqrt(-2 ln u1)·cos(2π u2)
// for even q and sqrt(-2 ln u1)·sin(2π u2) for odd q, computed in float64
// and rounded to float32. See the package comment on reproducibility.
func (k Key) Normal(row, col uint32) float32 {
	w := k.Words(row, col/4)
	q := col % 4
	return boxMuller(w[q&2], w[q&2+1], q&1 == 1)
}

// boxMuller returns sqrt(-2 ln u1)·cos(2π u2) (sin when useSin) with u1 in
// (0, 1] from a and u2 in [0, 1) from b, as float32.
func boxMuller(a, b uint32, useSin bool) float32 {
	u1 := (float64(a>>8) + 1) * (1.0 / twoPow24)
	u2 := float64(b>>8) * (1.0 / twoPow24)
	r := math.Sqrt(-2 * math.Log(u1))
	if useSin {
		return float32(r * math.Sin(2*math.Pi*u2))
	}
	return float32(r * math.Cos(2*math.Pi*u2))
}

// FillUniform fills dst, a [rows, cols] float32 row-major matrix
// (len(dst) = rows*cols), with UniformFloat(k.Word(row, col), lo, hi).
func (k Key) FillUniform(dst []float32, cols int, lo, hi float32) {
	k.fillRows(dst, cols, func(w [4]uint32, q int) float32 {
		return UniformFloat(w[q], lo, hi)
	})
}

// FillNormal fills dst, a [rows, cols] float32 row-major matrix, with
// mean + std*k.Normal(row, col) (the product and sum rounded to float32
// separately).
func (k Key) FillNormal(dst []float32, cols int, mean, std float32) {
	k.fillRows(dst, cols, func(w [4]uint32, q int) float32 {
		z := float32(std * boxMuller(w[q&2], w[q&2+1], q&1 == 1))
		return float32(mean + z)
	})
}

// fillRows sets each element (row, col) of dst, a [rows, cols] float32
// row-major matrix (a last row may be short), to f(k.Words(row, col/4),
// col%4), drawing each block of four words once.
func (k Key) fillRows(dst []float32, cols int, f func(w [4]uint32, q int) float32) {
	if cols <= 0 {
		return
	}
	for r := 0; r*cols < len(dst); r++ {
		row := dst[r*cols : min((r+1)*cols, len(dst))]
		for c0 := 0; c0 < len(row); c0 += 4 {
			w := k.Words(uint32(r), uint32(c0/4))
			for q := 0; q < 4 && c0+q < len(row); q++ {
				row[c0+q] = f(w, q)
			}
		}
	}
}
