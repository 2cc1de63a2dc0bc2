package backend

// Concurrent is implemented by backends with a second queue of work (a
// second CUDA stream). The ops that fn issues inside Beside start after
// every op issued before the call and run beside the ops issued after it
// returns, until Join: ops issued after Join start once fn's ops are done.
// A captured step keeps the two queues (a fork and a join in the graph).
// Ops inside fn must not touch buffers that the ops beside them touch,
// except to read what neither writes. Fallback when absent: fn's ops run
// in order (RunBeside, JoinBeside).
type Concurrent interface {
	Beside(fn func())
	Join()
}

// RunBeside runs fn's ops on be's second queue when be has one
// (Concurrent), and in order otherwise.
func RunBeside(be Backend, fn func()) {
	if c, ok := be.(Concurrent); ok {
		c.Beside(fn)
		return
	}
	fn()
}

// JoinBeside makes the ops issued next wait for those of RunBeside (a no-op
// on a backend without a second queue).
func JoinBeside(be Backend) {
	if c, ok := be.(Concurrent); ok {
		c.Join()
	}
}
