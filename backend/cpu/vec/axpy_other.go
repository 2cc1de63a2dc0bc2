//go:build !amd64 || purego

package vec

func axpy(a float32, x, y []float32) { axpyGo(a, x, y) }
