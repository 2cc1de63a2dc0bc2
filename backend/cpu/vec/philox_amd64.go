//go:build !purego

package vec

// philoxAVX2 writes groups×8 slots (32 words per group) starting at slot0.
//
//go:noescape
func philoxAVX2(k0, k1, index, slot0, c2, c3 uint32, out *uint32, groups int)

// philoxBlocks fills out (a multiple of 32 words) eight slots at a time
// when AVX2 is available and returns the number of slots written.
func philoxBlocks(key [2]uint32, index, slot0, c2, c3 uint32, out []uint32) int {
	if !hasFMA || len(out) < 32 {
		return 0
	}
	groups := len(out) / 32
	philoxAVX2(key[0], key[1], index, slot0, c2, c3, &out[0], groups)
	return groups * 8
}
