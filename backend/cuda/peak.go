package cuda

// Peak is what the device can do at most, from its attributes rather than
// from a measurement: the memory's bandwidth (two transfers per memory
// clock over the whole bus) and the dense tensor-core rate for 16-bit
// inputs with float32 accumulation at the SM's peak clock. The tensor
// rate is 0 where the architecture's is not known here.
type Peak struct {
	BandwidthGBs float64 `json:"bandwidth_gbs"`
	TensorTFLOPS float64 `json:"tensor_tflops"`
}

// tensorFlopsPerClock is the dense 16-bit tensor-core FLOPs (float32
// accumulation) per SM per clock of the data-centre parts of an
// architecture (compute capability): V100 1024, A100 2048, H100 and H200
// 4096; 0 for others, whose parts differ.
func tensorFlopsPerClock(arch int) float64 {
	switch arch {
	case 70:
		return 1024
	case 80:
		return 2048
	case 90:
		return 4096
	}
	return 0
}

// Peak returns the device's peak rates.
func (b *Backend) Peak() Peak {
	return b.dev.peak()
}

func (i deviceInfo) peak() Peak {
	p := Peak{BandwidthGBs: 2 * float64(i.memClockKHz) * 1e3 * float64(i.busBits) / 8 / 1e9}
	p.TensorTFLOPS = tensorFlopsPerClock(i.arch()) * float64(i.sms) * float64(i.clockKHz) * 1e3 / 1e12
	return p
}
