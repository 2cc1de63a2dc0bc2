package nn

import "github.com/fanout-gnn/fanout/backend"

// OutputGrad is for a loss of the caller's own over Forward's output (link
// prediction scores pairs of output rows): it returns the buffer, F32
// [top destination capacity, Classes], into which the caller writes the
// gradient of its loss with respect to the output rows, and lets the next
// Backward propagate it, as Loss's gradient would be.
func (m *Model) OutputGrad() backend.Buffer {
	if m.dAct == nil {
		return nil
	}
	m.haveLoss = true
	return m.dlogits() // jumping knowledge's head's, where the model has one
}
