package cpu

import (
	"math"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/internal/errcode"
)

// reduceChunk is the fixed number of rows per partial sum of a reduction;
// partial sums are added in chunk order, so the result does not depend on
// the thread count.
const reduceChunk = 64

// SoftmaxCrossEntropy over rows [:n] of logits [n.Cap, classes] with I32
// labels [n.Cap]: loss (F32 [1]) = the sum over the n rows of -log softmax
// at the label, over max(den, 1) (den: n when den.Buf is nil, the mean);
// dlogits (F32 [n.Cap, classes]) = its gradient; the int32 at correct.Off =
// rows whose argmax equals the label. Rows with a negative label add no
// loss, get a zero gradient and are not counted, but still divide. n = 0
// gives loss 0. A label >= classes is an error.
func (b *Backend) SoftmaxCrossEntropy(logits, labels backend.Buffer, n, den backend.Count, classes int, loss, dlogits backend.Buffer, correct backend.Count) {
	c, ck := b.checkSoftmaxCrossEntropy(logits, labels, n, den, classes, loss, dlogits, correct)
	defer c.end()
	if !c.ok {
		return
	}
	rows, ls, ys, lossOut, dl, correctPtr := ck.n, ck.logits, ck.labels, ck.loss, ck.dlogits, ck.correctP
	divide := rows
	if den.Buf != nil {
		divide = ck.den
	}
	for i, y := range ys[:rows] {
		if int(y) >= classes {
			c.raise(errcode.Label, i, int(y), classes)
			return
		}
	}
	chunks := (rows + reduceChunk - 1) / reduceChunk
	part := b.scratch64(2 * chunks) // [loss sum, correct count] per chunk
	inv := 1 / float64(max(divide, 1))
	b.pool.run(chunks, func(ci int) {
		var sum, hits float64
		for i := ci * reduceChunk; i < min(rows, (ci+1)*reduceChunk); i++ {
			l, hit := softmaxRow(ls[i*classes:(i+1)*classes], ys[i], inv, dl[i*classes:(i+1)*classes])
			sum += l
			if hit {
				hits++
			}
		}
		part[2*ci], part[2*ci+1] = sum, hits
	})
	var total, hits float64
	for ci := range chunks {
		total += part[2*ci]
		hits += part[2*ci+1]
	}
	lossOut[0] = float32(total * inv)
	*correctPtr = int32(hits)
}

// softmaxRow returns the loss of one row and whether its argmax equals the
// label, and writes the row's gradient of the mean loss (scale inv = 1/n).
func softmaxRow(x []float32, label int32, inv float64, grad []float32) (float64, bool) {
	if label < 0 {
		clear(grad)
		return 0, false
	}
	best := argmax(x)
	mx := float64(x[best])
	var sum float64
	for _, v := range x {
		sum += math.Exp(float64(v) - mx)
	}
	logSum := math.Log(sum)
	for j, v := range x {
		g := math.Exp(float64(v)-mx-logSum) * inv
		if j == int(label) {
			g -= inv
		}
		grad[j] = float32(g)
	}
	return logSum + mx - float64(x[label]), best == int(label)
}
