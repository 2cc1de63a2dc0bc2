package nn

import "github.com/fanout-gnn/fanout/backend"

// besideWork is a layer whose backward puts work beside the pass
// (backend.RunBeside): its weight gradients, whose inputs nothing after
// them in the backward pass writes, so that they run beside the input
// gradients below them. takeBesideMark returns the last such call's mark
// (0: none) and forgets it; Model.Backward joins it before anything reads
// the gradients.
type besideWork interface {
	takeBesideMark() backend.SideMark
}

// sideWork is a layer's part of besideWork: the mark of the last work it
// put beside.
type sideWork struct{ mark backend.SideMark }

// beside issues fn's ops beside the pass (backend.RunBeside) and keeps
// their mark.
func (s *sideWork) beside(be backend.Backend, fn func()) { s.mark = backend.RunBeside(be, fn) }

func (s *sideWork) takeBesideMark() backend.SideMark {
	m := s.mark
	s.mark = 0
	return m
}

// joinBesideWork has the ops issued next wait for the work the layers'
// backward put beside (besideWork).
func (m *Model) joinBesideWork() {
	for _, ly := range m.layers {
		if w, ok := ly.(besideWork); ok {
			backend.JoinBesideTo(m.be, w.takeBesideMark())
		}
	}
}
