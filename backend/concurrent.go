package backend

// Concurrent is implemented by backends with a second queue of work (a
// second CUDA stream). The ops that fn issues inside Beside start after
// every op issued before the call and run beside the ops issued after it
// returns, until Join: ops issued after Join start once fn's ops are done.
// JoinTo waits for less: for the second queue's ops up to the end of the
// Beside call that returned the mark, and not for those of later calls.
// A captured step keeps the two queues (forks and joins in the graph).
// Ops inside fn must not touch buffers that the ops beside them touch,
// except to read what neither writes. Fallback when absent: fn's ops run
// in order (RunBeside, JoinBeside, JoinBesideTo).
type Concurrent interface {
	Beside(fn func()) SideMark
	Join()
	JoinTo(m SideMark)
}

// SideMark names the work of one Beside call and everything issued on the
// second queue before it; the zero mark names none.
type SideMark uint64

// RunBeside runs fn's ops on be's second queue when be has one
// (Concurrent), and in order otherwise (the zero mark).
func RunBeside(be Backend, fn func()) SideMark {
	if c, ok := be.(Concurrent); ok {
		return c.Beside(fn)
	}
	fn()
	return 0
}

// JoinBeside makes the ops issued next wait for those of RunBeside (a no-op
// on a backend without a second queue).
func JoinBeside(be Backend) {
	if c, ok := be.(Concurrent); ok {
		c.Join()
	}
}

// JoinBesideTo makes the ops issued next wait for the second queue's ops up
// to mark m (RunBeside's), not for those put beside after it (a no-op on a
// backend without a second queue, or for the zero mark).
func JoinBesideTo(be Backend, m SideMark) {
	if c, ok := be.(Concurrent); ok && m != 0 {
		c.JoinTo(m)
	}
}
