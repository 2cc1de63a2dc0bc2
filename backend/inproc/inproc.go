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
	slots   []deposit // per rank: what it deposited for the exchange in progress
	arrived int
	left    int    // ranks that still have to take the current result
	gen     uint64 // exchanges completed
	result  []any  // every rank's value of the last exchange
	err     error  // set by Abort: every later exchange fails at once
}

// Comm is one rank's handle; it implements backend.Collective.
type Comm struct {
	g    *Group
	rank int
	be   backend.Backend
}

var (
	_ backend.Collective = (*Comm)(nil)
	_ backend.SumMax     = (*Comm)(nil)
)

// New makes a group over bes (rank i drives bes[i]) and returns its handles.
// Every backend must implement backend.HostFuncs.
func New(bes []backend.Backend) ([]*Comm, error) {
	if len(bes) == 0 {
		return nil, errors.New("inproc: no ranks")
	}
	g := &Group{n: len(bes), slots: make([]deposit, len(bes))}
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

// AllReduceSumMax is AllReduceMax(flag) and then AllReduceSum(sum)
// (backend.SumMax): the CPU twin of the GPUs' one round, so that CPU
// groups train through the same path.
func (c *Comm) AllReduceSumMax(sum, flag backend.Buffer) {
	c.AllReduceMax(flag)
	c.AllReduceSum(sum)
}

func (c *Comm) reduce(buf backend.Buffer, dt backend.DType, op func(acc, x float64) float64) {
	c.be.(backend.HostFuncs).HostFunc(func() {
		if buf.DType() != dt {
			c.Abort(fmt.Errorf("inproc: reduce a %s buffer, want %s", buf.DType(), dt))
			return
		}
		all, ok := c.g.exchange(c.rank, fmt.Sprintf("AllReduce%s of %d %s values", opName(dt), buf.Len(), dt), c.read(buf))
		if !ok {
			return
		}
		out, err := combine(all, op)
		if err != nil {
			c.Abort(err)
			return
		}
		c.write(buf, out)
	})
}

// AllToAll hands chunk p of send to rank p, as chunk c.rank of its recv
// (see backend.Collective); the values are copied, not converted, so every
// bit arrives.
func (c *Comm) AllToAll(send, recv backend.Buffer, chunk int) {
	c.be.(backend.HostFuncs).HostFunc(func() {
		n := c.g.n * chunk
		dt := send.DType()
		if chunk < 0 || dt != recv.DType() || (dt != backend.F32 && dt != backend.I32) || send.Len() < n || recv.Len() < n {
			c.Abort(fmt.Errorf("inproc: AllToAll of chunks of %d from %d %s to %d %s values over %d ranks", chunk, send.Len(), dt, recv.Len(), recv.DType(), c.g.n))
			return
		}
		var mine any
		if dt == backend.F32 {
			h := make([]float32, n)
			c.be.Read(h, send, 0)
			mine = h
		} else {
			h := make([]int32, n)
			c.be.Read(h, send, 0)
			mine = h
		}
		all, ok := c.g.exchange(c.rank, fmt.Sprintf("AllToAll of chunks of %d %s values", chunk, dt), mine)
		if !ok {
			return
		}
		var got any
		var err error
		switch h := mine.(type) {
		case []float32:
			got, err = takeChunks(h, all, c.rank, chunk)
		case []int32:
			got, err = takeChunks(h, all, c.rank, chunk)
		}
		if err != nil {
			c.Abort(err)
			return
		}
		c.be.Write(recv, 0, got)
	})
}

// takeChunks is chunk rank of every rank's deposit, in rank order (h is
// this rank's deposit; the others may still be reading it).
func takeChunks[T int32 | float32](h []T, all []any, rank, chunk int) ([]T, error) {
	for p, s := range all {
		v, ok := s.([]T)
		if !ok || len(v) != len(h) {
			return nil, fmt.Errorf("inproc: AllToAll: rank %d sends %d values of %T, rank %d %d of %T", p, len(v), s, rank, len(h), h)
		}
	}
	out := make([]T, len(h))
	for p, s := range all {
		copy(out[p*chunk:(p+1)*chunk], s.([]T)[rank*chunk:])
	}
	return out, nil
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

// deposit is one rank's part of an exchange: what it called, and its value.
type deposit struct {
	op string
	v  any
}

// opName names a reduction by the type it reduces (sums are of F32, maxima
// of I32).
func opName(dt backend.DType) string {
	if dt == backend.F32 {
		return "Sum"
	}
	return "Max"
}

// exchange deposits rank's value of collective op, waits for every rank,
// and returns every rank's value by rank (the caller must not modify
// them); ok is false when the group was aborted. Ranks whose calls differ
// (NCCL would wait for ever, or combine unrelated buffers: the ranks' ops
// are out of step) abort the group with an error naming both calls.
func (g *Group) exchange(rank int, op string, v any) ([]any, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	// Wait until the previous exchange's deposits have been taken by all.
	for g.left > 0 && g.err == nil {
		g.cond.Wait()
	}
	if g.err != nil {
		return nil, false
	}
	gen := g.gen
	g.slots[rank] = deposit{op: op, v: v}
	g.arrived++
	if g.arrived == g.n {
		g.result = make([]any, g.n)
		for r, d := range g.slots {
			g.result[r] = d.v
			if d.op != g.slots[0].op && g.err == nil {
				g.err = fmt.Errorf("inproc: collectives out of step: rank 0 calls %s, rank %d %s", g.slots[0].op, r, d.op)
			}
		}
		g.arrived, g.left = 0, g.n
		g.gen++
		g.cond.Broadcast()
	}
	for g.gen == gen && g.err == nil {
		g.cond.Wait()
	}
	if g.err != nil {
		return nil, false
	}
	out := g.result
	g.left--
	if g.left == 0 {
		g.cond.Broadcast()
	}
	return out, true
}

// combine reduces the ranks' values in rank order (every rank computes the
// same bits); lengths that differ are an error.
func combine(all []any, op func(acc, x float64) float64) ([]float64, error) {
	first := all[0].([]float64)
	out := append([]float64(nil), first...)
	for r, s := range all[1:] {
		v := s.([]float64)
		if len(v) != len(first) {
			return nil, fmt.Errorf("inproc: rank %d reduces %d values, rank 0 %d", r+1, len(v), len(first))
		}
		for i, x := range v {
			out[i] = op(out[i], x)
		}
	}
	return out, nil
}
