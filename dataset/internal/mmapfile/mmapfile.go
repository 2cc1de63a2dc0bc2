// Package mmapfile maps files read-only for the dataset packages that read
// arrays in place (npy's Map, the bounded edge-list import's graph files);
// where the system cannot map, ReadOnly says so and the callers read the
// file instead.
package mmapfile
