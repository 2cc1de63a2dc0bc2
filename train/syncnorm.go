package train

import "github.com/fanout-gnn/fanout/backend"

// normGroup is the collective through which the model's synchronised
// batch normalisation (Config.SyncNorm) all-reduces its moments and
// backward sums: the trainer's group, silent in the replay driver's
// warm-up step (as the gradients' all-reduce is: that step's effects are
// undone), each all-reduce after the work of the backend's second queue
// (the transposes, the flag's all-reduce and a remote store's fetch), so
// that every rank issues its collectives in one order.
type normGroup struct {
	backend.Collective
	t *Trainer
}

func (g normGroup) AllReduceSum(buf backend.Buffer) {
	if g.t.noReduce {
		return
	}
	backend.JoinBeside(g.t.be)
	g.Collective.AllReduceSum(buf)
}

// syncNorm hands the model the group its batch normalisation reads its
// statistics from, when Config.SyncNorm asks for it and the trainer is
// one rank of a group.
func (t *Trainer) syncNorm() {
	if c := t.group(); c != nil && t.cfg.SyncNorm {
		t.model.SyncNorm(normGroup{Collective: c, t: t})
	}
}
