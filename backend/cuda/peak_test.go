package cuda

import (
	"math"
	"testing"
)

// TestPeakFromAttributes: an H100 SXM's attributes give its data sheet's
// bandwidth (3.35 TB/s) and its dense 16-bit tensor rate at the peak
// clock; an architecture without a known rate gives bandwidth alone.
func TestPeakFromAttributes(t *testing.T) {
	h100 := deviceInfo{major: 9, sms: 132, clockKHz: 1980000, memClockKHz: 2619000, busBits: 5120}
	p := h100.peak()
	if math.Abs(p.BandwidthGBs-3352.3) > 0.1 || math.Abs(p.TensorTFLOPS-1070.5) > 0.1 {
		t.Fatalf("H100 peak %+v, want 3352.3 GB/s and 1070.5 TFLOP/s", p)
	}
	other := h100
	other.major, other.minor = 8, 6
	if p := other.peak(); p.TensorTFLOPS != 0 || p.BandwidthGBs == 0 {
		t.Fatalf("sm_86 peak %+v, want bandwidth and no tensor rate", p)
	}
}
