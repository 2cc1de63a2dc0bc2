// Package inproc is a backend.Collective for ranks that live in one process
// (N CPU backends standing in for N GPUs): a reduction gathers every rank's
// buffer on the host, sums (or takes the maximum) in rank order, and hands
// every rank the same result, so all ranks hold the same bits afterwards and
// the result does not depend on thread timing.
//
// Each reduction is issued as a host function in the rank backend's op
// order (backend.HostFuncs): at once on the CPU backend, recorded into a
// capture by package record and run at every replay.
package inproc

import (
	"errors"
	"fmt"
	"sync"

	"github.com/fanout-gnn/fanout/backend"
)

// Group is the shared state of n ranks.
type Group struct {
	n int

	mu      sync.Mutex
	cond    *sync.Cond
	slots   [][]float64 // per rank: the values deposited for the reduction in progress
	arrived int
	left    int    // ranks that still have to take the current result
	gen     uint64 // reductions completed
	result  []float64
	err     error // set by Abort: every later reduction fails at once
}

// Comm is one rank's handle; it implements backend.Collective.
type Comm struct {
	g    *Group
	rank int
	be   backend.Backend
}

var _ backend.Collective = (*Comm)(nil)

// New makes a group over bes (rank i drives bes[i]) and returns its handles.
// Every backend must implement backend.HostFuncs.
func New(bes []backend.Backend) ([]*Comm, error) {
	if len(bes) == 0 {
		return nil, errors.New("inproc: no ranks")
	}
	g := &Group{n: len(bes), slots: make([][]float64, len(bes))}
	g.cond = sync.NewCond(&g.mu)
	cs := make([]*Comm, len(bes))
	for i, be := range bes {
		if _, ok := be.(backend.HostFuncs); !ok {
			return nil, fmt.Errorf("inproc: rank %d: backend %s cannot run host functions in op order", i, be.Name())
		}
		cs[i] = &Comm{g: g, rank: i, be: be}
	}
	return cs, nil
}

func (c *Comm) Rank() int { return c.rank }
func (c *Comm) Size() int { return c.g.n }

// Close is a no-op: the group holds no resources.
func (c *Comm) Close() error { return nil }

// Err is the error that aborted the group, if any.
func (c *Comm) Err() error {
	c.g.mu.Lock()
	defer c.g.mu.Unlock()
	return c.g.err
}

// Abort fails the group: ranks waiting in a reduction return at once, and
// every later reduction is skipped. Drivers call it when a rank fails, so
// that the others do not wait for it forever.
func (c *Comm) Abort(err error) {
	g := c.g
	g.mu.Lock()
	if g.err == nil {
		g.err = fmt.Errorf("rank %d: %w", c.rank, err)
	}
	g.mu.Unlock()
	g.cond.Broadcast()
}

// AllReduceSum replaces the F32 buffer buf with the sum over ranks, added
// in rank order in float64 and rounded once.
func (c *Comm) AllReduceSum(buf backend.Buffer) {
	c.reduce(buf, backend.F32, func(acc, x float64) float64 { return acc + x })
}

// AllReduceMax replaces the I32 buffer buf with the maximum over ranks.
func (c *Comm) AllReduceMax(buf backend.Buffer) {
	c.reduce(buf, backend.I32, func(acc, x float64) float64 { return max(acc, x) })
}

func (c *Comm) reduce(buf backend.Buffer, dt backend.DType, op func(acc, x float64) float64) {
	c.be.(backend.HostFuncs).HostFunc(func() {
		if buf.DType() != dt {
			c.Abort(fmt.Errorf("inproc: reduce a %s buffer, want %s", buf.DType(), dt))
			return
		}
		vals := c.read(buf)
		out, ok := c.g.exchange(c.rank, vals, op)
		if ok {
			c.write(buf, out)
		}
	})
}

// read copies buf to the host as float64.
func (c *Comm) read(buf backend.Buffer) []float64 {
	out := make([]float64, buf.Len())
	if buf.DType() == backend.F32 {
		h := make([]float32, buf.Len())
		c.be.Read(h, buf, 0)
		for i, v := range h {
			out[i] = float64(v)
		}
		return out
	}
	h := make([]int32, buf.Len())
	c.be.Read(h, buf, 0)
	for i, v := range h {
		out[i] = float64(v)
	}
	return out
}

// write copies vals back into buf in its element type.
func (c *Comm) write(buf backend.Buffer, vals []float64) {
	if buf.DType() == backend.F32 {
		h := make([]float32, len(vals))
		for i, v := range vals {
			h[i] = float32(v)
		}
		c.be.Write(buf, 0, h)
		return
	}
	h := make([]int32, len(vals))
	for i, v := range vals {
		h[i] = int32(v)
	}
	c.be.Write(buf, 0, h)
}

// exchange deposits rank's values, waits for every rank, and returns the
// reduction in rank order; ok is false when the group was aborted or the
// ranks' lengths differ.
func (g *Group) exchange(rank int, vals []float64, op func(acc, x float64) float64) ([]float64, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	// Wait until the previous reduction's result has been taken by all.
	for g.left > 0 && g.err == nil {
		g.cond.Wait()
	}
	if g.err != nil {
		return nil, false
	}
	gen := g.gen
	g.slots[rank] = vals
	g.arrived++
	if g.arrived == g.n {
		g.result = g.combine(op)
		g.arrived, g.left = 0, g.n
		g.gen++
		g.cond.Broadcast()
	}
	for g.gen == gen && g.err == nil {
		g.cond.Wait()
	}
	if g.err != nil || g.result == nil {
		return nil, false
	}
	out := g.result
	g.left--
	if g.left == 0 {
		g.cond.Broadcast()
	}
	return out, true
}

// combine reduces the deposited slots in rank order; a length mismatch
// aborts the group. The caller holds g.mu.
func (g *Group) combine(op func(acc, x float64) float64) []float64 {
	n := len(g.slots[0])
	for r, s := range g.slots {
		if len(s) != n {
			g.err = fmt.Errorf("inproc: rank %d reduces %d values, rank 0 %d", r, len(s), n)
			return nil
		}
	}
	out := append([]float64(nil), g.slots[0]...)
	for _, s := range g.slots[1:] {
		for i, v := range s {
			out[i] = op(out[i], v)
		}
	}
	return out
}
