package tensorboard

import (
	"os"
	"testing"
)

// TestWriteForPythonReader writes a run's worth of scalars into the
// directory FANOUT_TENSORBOARD_OUT names, for TensorBoard's own reader
// (EventAccumulator) to check where it is installed: "loss" at steps
// 0, 10, ..., 90 with values 1/(k+1), and "valid_acc" at steps 1 to 3
// with values 0.5, 0.6, 0.7. It reads them back here first.
func TestWriteForPythonReader(t *testing.T) {
	dir := os.Getenv("FANOUT_TENSORBOARD_OUT")
	if dir == "" {
		t.Skip("FANOUT_TENSORBOARD_OUT is not set")
	}
	w, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for k := range int64(10) {
		if err := w.Scalar("loss", 10*k, 1/float64(k+1)); err != nil {
			t.Fatal(err)
		}
	}
	for epoch, acc := range []float64{0.5, 0.6, 0.7} {
		if err := w.Scalar("valid_acc", int64(epoch+1), acc); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadScalars(w.Path())
	if err != nil || len(got) != 13 {
		t.Fatalf("%d scalars read back, %v", len(got), err)
	}
	t.Logf("wrote %s", w.Path())
}
