//go:build !amd64 || purego

package vec

func dropBlocks(words []uint32, thr uint32, scale float32, relu bool, y []float32, mask []uint8) int {
	return 0
}
