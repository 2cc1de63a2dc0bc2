package cuda

import (
	"fmt"
	"sync"

	"github.com/fanout-gnn/fanout/backend"
)

// peerMax is the most GPUs a PeerGroup joins (the kernel's table).
const peerMax = 8

// peerMaxFloats is the largest buffer summed through peer memory: each
// rank's receive area holds two slots of the group's copies of it, made
// with the group since a captured step cannot allocate (16 MiB a GPU for
// two GPUs, 64 MiB for eight). NCCL's ring, whose bandwidth is what counts
// for larger buffers, sums those.
const peerMaxFloats = 1 << 20

// peerFlags is the most I32 flag words a round carries (AllReduceSumMax),
// in the last floats of an entry, whose stride is peerStride.
const (
	peerFlags  = 4
	peerStride = peerMaxFloats + peerFlags
)

// PeerGroup joins the GPUs of one process, already joined by NCCL, so that
// AllReduceSum runs as one kernel that writes each rank's buffer into its
// peers' memory, waits for theirs and adds them (kernels/peerreduce.cu),
// instead of NCCL's all-reduce: a step's gradients are under a megabyte,
// and NCCL's rounds cost more than their bytes (measured in docs/perf.md).
// AllReduceSumMax takes the maximum of a step's flag words in the same
// round. Everything else (AllReduceMax, AllToAll, and sums of buffers
// beside the main stream, unaligned, or over peerMaxFloats) stays NCCL's.
//
// The ranks meet on the host at each AllReduceSum to check that they sum
// buffers of one length: every rank must issue the same AllReduceSum
// calls in the same order, as with NCCL. A captured graph replays without
// meeting.
type PeerGroup struct {
	bes   []*Backend
	flags []*buffer // per rank: u64[peerMax], written by its peers
	ctl   []*buffer // per rank: u32 {round, blocks that pushed, blocks that summed}
	recv  []*buffer // per rank: its receive area, [2][ranks][peerStride]

	mu      sync.Mutex
	cur     *peerRound
	aborted chan struct{}
	once    sync.Once
	err     error
}

// peerRound is one AllReduceSum call as the ranks meet on the host (each
// rank's buffer length and flag words).
type peerRound struct {
	n, nf   []int
	aligned []bool
	arrived int
	done    chan struct{}
}

func newPeerRound(n int) *peerRound {
	return &peerRound{n: make([]int, n), nf: make([]int, n), aligned: make([]bool, n), done: make(chan struct{})}
}

// PeerComm is one rank's collective of a PeerGroup: AllReduceSum over
// peer memory, the rest its NCCL communicator's.
type PeerComm struct {
	*Comm
	g *PeerGroup
}

var (
	_ backend.Collective = (*PeerComm)(nil)
	_ backend.SumMax     = (*PeerComm)(nil)
)

// NewPeerGroup joins the ranks of comms (one process's, comms[i] rank i,
// each on its own device) over peer memory. It fails where a device cannot
// read another's memory; the caller may then keep the NCCL communicators.
func NewPeerGroup(comms []*Comm) ([]*PeerComm, error) {
	n := len(comms)
	if n < 2 || n > peerMax {
		return nil, fmt.Errorf("cuda: a peer group joins 2 to %d GPUs, not %d", peerMax, n)
	}
	g := &PeerGroup{cur: newPeerRound(n), aborted: make(chan struct{})}
	for i, c := range comms {
		if c.rank != i || c.size != n {
			return nil, fmt.Errorf("cuda: peer group: communicator %d is rank %d of %d", i, c.rank, c.size)
		}
		g.bes = append(g.bes, c.be)
	}
	for _, b := range g.bes {
		for _, p := range g.bes {
			if err := b.enablePeer(p); err != nil {
				return nil, err
			}
		}
	}
	for _, b := range g.bes {
		f, c, a, err := b.peerWords(n)
		if err != nil {
			for i := range g.flags {
				g.free(i)
			}
			return nil, err
		}
		g.flags, g.ctl, g.recv = append(g.flags, f), append(g.ctl, c), append(g.recv, a)
	}
	out := make([]*PeerComm, n)
	for i, c := range comms {
		out[i] = &PeerComm{Comm: c, g: g}
	}
	return out, nil
}

// peerWords allocates a rank's flag and control words (zeroed) and its
// receive area for a group of n.
func (b *Backend) peerWords(n int) (flags, ctl, recv *buffer, err error) {
	var bufs []backend.Buffer
	for _, a := range []struct {
		dt backend.DType
		n  int
	}{{backend.I32, 2 * peerMax}, {backend.I32, 4}, {backend.F32, 2 * n * peerStride}} {
		x, err := b.Alloc(a.dt, a.n)
		if err != nil {
			for _, x := range bufs {
				b.Free(x)
			}
			return nil, nil, nil, fmt.Errorf("cuda: peer group: %w", err)
		}
		bufs = append(bufs, x)
	}
	b.Fill(bufs[0], 0)
	b.Fill(bufs[1], 0)
	if err := b.Sync(); err != nil {
		return nil, nil, nil, err
	}
	return bufs[0].(*buffer), bufs[1].(*buffer), bufs[2].(*buffer), nil
}

// free gives rank i's words and area back (once).
func (g *PeerGroup) free(i int) {
	if g.flags[i] != nil {
		for _, x := range []*buffer{g.flags[i], g.ctl[i], g.recv[i]} {
			g.bes[i].Free(x)
		}
		g.flags[i], g.ctl[i], g.recv[i] = nil, nil, nil
	}
}

// meet posts this rank's buffer length, flag words and whether the buffer
// suits the kernel (16-byte aligned) for the current call and waits for
// every rank's, or for Abort. It reports whether every rank's buffer suits
// it (else every rank sums with NCCL).
func (g *PeerGroup) meet(rank, n, nf int, aligned bool) (bool, error) {
	g.mu.Lock()
	if g.err != nil {
		g.mu.Unlock()
		return false, g.err
	}
	r := g.cur
	r.n[rank], r.nf[rank], r.aligned[rank] = n, nf, aligned
	r.arrived++
	if r.arrived == len(g.bes) {
		g.cur = newPeerRound(len(g.bes))
		close(r.done)
	}
	g.mu.Unlock()
	select {
	case <-r.done:
	case <-g.aborted:
		return false, g.err
	}
	for j, m := range r.n {
		if m != n || r.nf[j] != nf {
			return false, fmt.Errorf("AllReduceSum: rank %d sums %d elements (%d flag words), rank %d %d (%d) (the ranks' calls differ)", rank, n, nf, j, m, r.nf[j])
		}
		aligned = aligned && r.aligned[j]
	}
	return aligned, nil
}

// AllReduceSum sums the F32 buffer across the ranks in place (in rank
// order: every rank gets the same bits).
func (p *PeerComm) AllReduceSum(buf backend.Buffer) { p.reduce("AllReduceSum", buf, nil) }

// AllReduceSumMax sums the F32 buffer sum across the ranks as AllReduceSum
// does and, in the same round, replaces the I32 buffer flag (at most
// peerFlags words) with its element-wise maximum over the ranks
// (backend.SumMax). Where the sum falls back to NCCL, so does the flag,
// first.
func (p *PeerComm) AllReduceSumMax(sum, flag backend.Buffer) { p.reduce("AllReduceSumMax", sum, flag) }

func (p *PeerComm) reduce(op string, buf, flag backend.Buffer) {
	b := p.be
	c := b.begin(op)
	x := c.buf("sum", buf, backend.F32, 0)
	var f *buffer
	if flag != nil {
		if f = c.buf("flag", flag, backend.I32, 0); f != nil && f.n > peerFlags {
			c.failf("flag: %d words, at most %d", f.n, peerFlags)
		}
	}
	ok, beside := c.ok, b.side.active
	c.end()
	nccl := func() {
		if flag != nil {
			p.Comm.AllReduceMax(flag)
		}
		p.Comm.AllReduceSum(buf)
	}
	if !ok || x.n == 0 && f == nil {
		return // a bad buffer failed this rank (its peers time out), or nothing to sum
	}
	if beside || x.n > peerMaxFloats {
		nccl()
		return
	}
	nf := 0
	if f != nil {
		nf = f.n
	}
	all, err := p.g.meet(p.rank, x.n, nf, x.addr()%16 == 0)
	if err == nil && !all {
		nccl()
		return
	}
	c = b.begin(op)
	defer c.end()
	if err != nil {
		c.fail(err)
		return
	}
	var s structArg
	for _, words := range p.g.addrs() {
		for i := 0; i < peerMax; i++ {
			if i < len(words) {
				s.ptr(words[i])
			} else {
				s.u64(0)
			}
		}
	}
	s.i64(peerStride).i32(p.size).i32(p.rank)
	c.args().bytes(s.done()).ptr(x.addr()).i64(int64(x.n)).ptr(f.addr()).i32(nf).ptr(p.g.ctl[p.rank].addr()).ptr(b.errDev)
	c.launch("peer_sum", d1(min(c.blocks(int64(x.n+3)/4, 256), uint32(b.dev.sms))), d1(256), 0)
}

// addrs are the ranks' receive areas' and flag words' addresses.
func (g *PeerGroup) addrs() [2][]uintptr {
	var out [2][]uintptr
	for i := range g.bes {
		out[0] = append(out[0], g.recv[i].addr())
		out[1] = append(out[1], g.flags[i].addr())
	}
	return out
}

// Abort fails every rank's pending and later AllReduceSum (a peer died)
// and aborts the NCCL communicator. Kernels already waiting on the dead
// peer end at their timeout with an error.
func (p *PeerComm) Abort(err error) {
	g := p.g
	g.once.Do(func() {
		g.mu.Lock()
		g.err = fmt.Errorf("AllReduceSum: the group was aborted: %w", err)
		g.mu.Unlock()
		close(g.aborted)
	})
	p.Comm.Abort(err)
}

// Close closes the NCCL communicator and frees this rank's words.
func (p *PeerComm) Close() error {
	err := p.Comm.Close()
	p.g.free(p.rank)
	return err
}
