package rng

// Derive is the seed of part k (k >= 1) of a draw whose parts share one
// Philox stream and counter layout, such as the relations of a typed
// graph sampled at one hop (each from its own vertex ids): seed mixed with
// k by splitmix64's finaliser, so parts draw independent words. Part 0 is
// seed itself, so that a draw of one part keys as it would undivided.
func Derive(seed uint64, k int) uint64 {
	if k == 0 {
		return seed
	}
	z := seed + uint64(k)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
