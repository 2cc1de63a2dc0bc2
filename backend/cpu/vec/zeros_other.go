//go:build !amd64 || purego

package vec

func zeroRun(x []float32) int { return zeroRunGo(x) }
