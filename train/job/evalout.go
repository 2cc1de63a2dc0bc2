package job

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/train"
)

// evalOutputs are eval's per-vertex outputs, each a .npy path or "".
type evalOutputs struct {
	embeddings, logits, probabilities string
}

func (o evalOutputs) any() bool { return o.embeddings != "" || o.logits != "" || o.probabilities != "" }

// write computes what was asked by layer-wise full-neighbour inference
// over every vertex and writes it: the last hidden layer's output [N,
// hidden], the logits [N, classes] and their softmax, float32.
func (o evalOutputs) write(tr *train.Trainer, be backend.Backend, n int, out io.Writer) error {
	mc := tr.Model().Config()
	if o.embeddings != "" {
		if mc.Layers < 2 {
			return errors.New("--embeddings: a one-layer model has no hidden layer")
		}
		_, dim := mc.Dims(mc.Layers - 2)
		if err := inferTo(tr, be, train.InferOptions{Layers: mc.Layers - 1}, n, dim, o.embeddings, nil, out, "embeddings"); err != nil {
			return err
		}
	}
	if o.logits == "" && o.probabilities == "" {
		return nil
	}
	var logits []float32
	keep := func(v []float32) { logits = v }
	if err := inferTo(tr, be, train.InferOptions{}, n, mc.Classes, o.logits, keep, out, "logits"); err != nil {
		return err
	}
	if o.probabilities == "" {
		return nil
	}
	softmaxRows(logits, mc.Classes)
	if err := npy.WriteFile(o.probabilities, logits, []int64{int64(n), int64(mc.Classes)}); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote probabilities [%d, %d] to %s\n", n, mc.Classes, o.probabilities)
	return nil
}

// inferTo runs layer-wise inference, reads the [n, dim] table back, writes
// it to path (when set) and hands it to keep (when set).
func inferTo(tr *train.Trainer, be backend.Backend, opt train.InferOptions, n, dim int, path string, keep func([]float32), out io.Writer, what string) error {
	buf, err := tr.InferAllWith(opt)
	if err != nil {
		return err
	}
	host := make([]float32, n*dim)
	be.Read(host, buf, 0)
	be.Free(buf)
	if err := be.Sync(); err != nil {
		return err
	}
	if path != "" {
		if err := npy.WriteFile(path, host, []int64{int64(n), int64(dim)}); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s [%d, %d] to %s\n", what, n, dim, path)
	}
	if keep != nil {
		keep(host)
	}
	return nil
}

// softmaxRows replaces each row of x ([rows, k]) by its softmax, computed
// in float64 after subtracting the row's maximum.
func softmaxRows(x []float32, k int) {
	for r := 0; r+k <= len(x); r += k {
		row := x[r : r+k]
		m := math.Inf(-1)
		for _, v := range row {
			m = max(m, float64(v))
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(float64(v) - m)
		}
		for i, v := range row {
			row[i] = float32(math.Exp(float64(v)-m) / sum)
		}
	}
}
