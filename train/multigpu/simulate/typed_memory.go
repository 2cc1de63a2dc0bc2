package simulate

import (
	"math"

	"github.com/fanout-gnn/fanout/train"
)

// Memory is what one device of a typed job holds, in bytes: every type's
// feature table and every relation's lists (each device holds them all),
// the model (its parameters four times: weights, gradients and Adam's two
// moments) and the step.
type Memory struct {
	// Features are every type's table in its dtype (a featureless
	// type's learned rows, which only one device trains, left out).
	Features int64 `json:"features"`
	// Lists are every relation's CSR (int64 offsets per destination,
	// int32 neighbours) and every type's relabelling table (8 bytes a
	// vertex).
	Lists int64 `json:"lists"`
	Model int64 `json:"model"`
	// Step is a lower bound of the step at the largest sizes simulated
	// times the drivers' margin (the envelope the replay driver tightens
	// to): every layer's source ids, blocks (offsets, neighbours and their
	// local ids), the input rows as float32, and every layer's outputs
	// and their gradients (float32, hidden wide); the model's other
	// scratch is left out.
	Step   int64 `json:"step"`
	Total  int64 `json:"total"`
	Budget int64 `json:"budget"` // --gpu-memory
	Fits   bool  `json:"fits"`
}

// TypedMemory is a device's memory for the simulated job res with a
// model of paramBytes float32 parameters, hidden wide, under budget.
func TypedMemory(res *TypedResult, paramBytes int64, hidden int, budget int64) Memory {
	m := Memory{Model: 4 * paramBytes, Budget: budget}
	for _, ty := range res.Types {
		m.Features += ty.Vertices * int64(ty.RowBytes)
		m.Lists += 8 * ty.Vertices
	}
	for _, rel := range res.Relations {
		m.Lists += 8*(res.Types[rel.Dst].Vertices+1) + 4*rel.Edges
	}
	m.Step = stepBytes(res, hidden, train.DefaultMargin)
	m.Total = m.Features + m.Lists + m.Model + m.Step
	m.Fits = m.Total <= budget
	return m
}

// stepBytes is Memory.Step for res at margin.
func stepBytes(res *TypedResult, hidden int, margin float64) int64 {
	grow := func(v int64) int64 { return int64(math.Ceil(float64(v) * margin)) }
	L := len(res.Largest)
	per := res.Config.Batch / max(res.Config.Ranks(), 1)
	var n int64
	for l, ly := range res.Largest {
		dst := func(t int) int64 {
			switch {
			case l+1 < L:
				return grow(res.Largest[l+1].Src[t])
			case t == res.Target:
				return int64(per)
			}
			return 0
		}
		for t, src := range ly.Src {
			n += 4*grow(src) + 2*4*dst(t)*int64(hidden)
			if l == 0 {
				n += 4 * grow(src) * int64(res.Types[t].FeatDim)
			}
		}
		for r, e := range ly.Edges {
			n += 4*(dst(res.Relations[r].Dst)+1) + 8*grow(e)
		}
	}
	return n
}
