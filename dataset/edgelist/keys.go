package edgelist

import "encoding/binary"

// A key is one entry of the graph being built, row r listing column c,
// packed as r<<32 | c: sorting keys sorts the entries by row, then by
// column, and equal entries have equal keys. Vertex ids are below 2^31.
func key(r, c int32) uint64 { return uint64(uint32(r))<<32 | uint64(uint32(c)) }

// unkey unpacks a key.
func unkey(k uint64) (r, c int32) { return int32(k >> 32), int32(uint32(k)) }

// keyBytes is the size of a key on disk (little-endian).
const keyBytes = 8

// toLittleEndian rewrites each key in place as its little-endian bytes,
// so that the slice's memory is the run file's content on any host.
func toLittleEndian(keys []uint64, b []byte) {
	for i, k := range keys {
		binary.LittleEndian.PutUint64(b[i*keyBytes:], k)
	}
}

// fromLittleEndian is toLittleEndian's inverse.
func fromLittleEndian(keys []uint64, b []byte) {
	for i := range keys {
		keys[i] = binary.LittleEndian.Uint64(b[i*keyBytes:])
	}
}
