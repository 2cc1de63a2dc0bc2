package ogb

import "math"

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [23]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// fastFloat32 parses the common decimal forms ([sign] digits [. digits]
// [e [sign] digits], at most 19 significant digits, decimal exponent within
// ±22) to the correctly rounded float32, or reports ok = false so that the
// caller falls back to strconv.
//
// Method: the significant digits form an exact uint64 m, and v = m·10^e.
// x = float64(m) multiplied or divided by the exact 10^|e| carries two
// roundings, so |x - v| < 2 float64 ulps of x. Every float32 value and every
// midpoint between neighbouring float32 values is a float64, so unless x lies
// within 4 float64 ulps of such a midpoint (the 29 low mantissa bits of x
// near 1<<28), v and x round to the same float32. Those rare cases, and
// values near the float32 overflow and subnormal ranges, fall back.
func fastFloat32(b []byte) (float32, bool) {
	b, neg := cutSign(b)
	mant, nd, i, ok := mantissaDigits(b, 0, 0)
	if !ok {
		return 0, false
	}
	digits := i > 0
	exp := 0 // decimal exponent
	if i < len(b) && b[i] == '.' {
		var frac int
		if mant, _, frac, ok = mantissaDigits(b[i+1:], mant, nd); !ok {
			return 0, false
		}
		digits = digits || frac > 0
		exp -= frac
		i += 1 + frac
	}
	if !digits {
		return 0, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		e, ok := expDigits(b[i+1:])
		if !ok {
			return 0, false
		}
		exp += e
		i = len(b)
	}
	if i != len(b) {
		return 0, false
	}
	return scale(mant, exp, neg)
}

// mantissaDigits appends the decimal digits at the start of b to mant,
// which holds nd significant digits (leading zeros are not significant),
// and returns the new mantissa, its significant digits and how many bytes
// of b were digits; ok is false past 19 significant digits.
func mantissaDigits(b []byte, mant uint64, nd int) (_ uint64, _, n int, ok bool) {
	for ; n < len(b) && b[n] >= '0' && b[n] <= '9'; n++ {
		if mant == 0 && b[n] == '0' {
			continue
		}
		if nd == 19 {
			return 0, 0, 0, false
		}
		mant = mant*10 + uint64(b[n]-'0')
		nd++
	}
	return mant, nd, n, true
}

// expDigits parses an exponent: [sign] 1 to 4 digits.
func expDigits(b []byte) (int, bool) {
	b, neg := cutSign(b)
	u, ok := digitsValue(b, 4)
	if !ok {
		return 0, false
	}
	if neg {
		return -int(u), true
	}
	return int(u), true
}

// scale returns ±mant·10^exp as float32 when the fast path is safe.
func scale(mant uint64, exp int, neg bool) (float32, bool) {
	if mant == 0 {
		if neg {
			return float32(math.Copysign(0, -1)), true
		}
		return 0, true
	}
	if exp < -22 || exp > 22 {
		return 0, false
	}
	x := float64(mant)
	if exp < 0 {
		x /= pow10[-exp]
	} else {
		x *= pow10[exp]
	}
	const half = 1 << 28 // float32 midpoint in the 29 bits float32 drops
	low := int64(math.Float64bits(x) & (1<<29 - 1))
	if low >= half-4 && low <= half+4 {
		return 0, false
	}
	if x < 0x1p-125 || x > 0x1p127 {
		return 0, false
	}
	f := float32(x)
	if neg {
		f = -f
	}
	return f, true
}
