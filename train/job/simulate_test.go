package job

import "testing"

// TestStepTimesFlag: --step-times reads seeds:ms pairs in ascending seeds.
func TestStepTimesFlag(t *testing.T) {
	got, err := parseStepTimes("512:0.8, 1024:1.0")
	if err != nil || got.At(768) != 0.9 {
		t.Errorf("got %+v, %v", got, err)
	}
	for _, bad := range []string{"512", "1024:1.0,512:0.8", "a:1", "512:0"} {
		if _, err := parseStepTimes(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
