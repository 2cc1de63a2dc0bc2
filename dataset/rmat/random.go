package rmat

import (
	"math/bits"
	"math/rand/v2"
)

// Random streams: each part of the generator draws from its own stream, so
// changing one part never shifts the numbers another part sees.
const (
	streamEdges uint64 = iota + 1
	streamPerm
	streamTypes
	streamCentroids
	streamFeatures
	streamSplit
)

// mix is a strong 64-bit hash (the splitmix64 finalizer) of x.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// key hashes (seed, stream, index) into 64 random-looking bits.
func key(seed, stream, index uint64) uint64 {
	return mix(mix(mix(seed+0x9e3779b97f4a7c15)^stream*0xd1b54a32d192ed03) ^ index)
}

// newPCG returns a PCG generator for (seed, stream, index). Only Uint64 is
// used, whose output is fixed by the PCG-DXSM definition.
func newPCG(seed, stream, index uint64) rand.PCG {
	var p rand.PCG
	p.Seed(key(seed, stream, index), key(seed, stream^0x8000, index))
	return p
}

// below returns a uniform integer in [0, n) from 64 random bits
// (multiply-high; bias at most n/2^64).
func below(r, n uint64) uint64 {
	hi, _ := bits.Mul64(r, n)
	return hi
}

// idPermutation is a seeded bijection of [0, 2^bits): rounds of xor with a
// key, multiplication by an odd constant and an xor-shift, each invertible
// modulo 2^bits. It replaces a permutation table: no memory, and no cache
// misses when ids are mapped at random.
type idPermutation struct {
	mask  uint32
	shift uint
	key   [4]uint32
	mul   [4]uint32 // odd
}

func newIDPermutation(bits int, seed uint64) idPermutation {
	p := idPermutation{mask: uint32(uint64(1)<<bits - 1), shift: uint(bits/2 + 1)}
	for i := range p.key {
		r := key(seed, streamPerm, uint64(i))
		p.key[i] = uint32(r) & p.mask
		p.mul[i] = uint32(r>>32) | 1
	}
	return p
}

// apply maps x in [0, 2^bits) to its image in [0, 2^bits).
func (p *idPermutation) apply(x uint32) uint32 {
	for i := range p.key {
		x = ((x ^ p.key[i]) * p.mul[i]) & p.mask
		x ^= x >> p.shift
	}
	return x
}
