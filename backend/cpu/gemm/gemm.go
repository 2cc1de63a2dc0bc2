// Package gemm is the single-precision matrix multiply of the CPU backend:
// C = alpha·op(A)·op(B) + beta·C on row-major matrices, blocked and packed
// in the manner of BLIS: op(B) is copied into zero-padded panels of nr
// columns, op(A) into panels of mr rows (or, when A is not transposed and an
// assembly kernel runs, read in place), and an mr×nr register-blocked
// micro-kernel accumulates each tile over blocks of kc. On amd64 the
// micro-kernel is AVX-512 (6×32) or AVX2+FMA (two 6×16 halves) assembly,
// chosen from the CPU's features at start-up; elsewhere, or with the purego
// build tag, a Go loop.
//
// Work is split across threads by blocks of output rows (or output columns
// when there are few rows), never along k: every element of C is accumulated
// in the same order for any thread count, so results are bitwise identical
// for 1 and for N threads. The assembly kernels agree with each other bit
// for bit (both fuse multiply-adds in the same order); the Go kernel rounds
// differently.
package gemm

import "fmt"

// Blocking parameters. mr×nr is the micro-kernel's register tile; kc is the
// depth of one packed panel (the k dimension is processed in blocks of kc,
// always in increasing order); mc and nc bound the packed blocks of A and B.
const (
	mr = 6
	nr = 32
	kc = 256
	mc = 96
	nc = 4096

	// fewRows is the largest m multiplied by sgemmFewRows (threads split
	// the columns and run through k without synchronising).
	fewRows = 256
)

// Runner runs fn(i) for every i in [0, parts), possibly concurrently, and
// returns when all calls are done. Calls must write disjoint memory.
type Runner func(parts int, fn func(part int))

// Context holds packing buffers and the thread count. It is not safe for
// concurrent use: give each goroutine its own, or serialise calls.
type Context struct {
	threads int
	run     Runner
	packB   []float32   // kc × roundup(nc, nr), shared by the threads
	packA   [][]float32 // per thread: an mc × kc block of A (fewRows × kc in fewRowsOwn)
	ownB    [][]float32 // per thread: its own B panels in fewRowsOwn
	fewA    []float32   // fewRowsShared: op(A)'s packed blocks of one run of k blocks
	fewB    []float32   // fewRowsShared: op(B)'s packed panels of the same run
}

// NewContext returns a Context that splits work into threads parts run by
// run. A nil run, or threads < 1, runs everything on the caller.
func NewContext(threads int, run Runner) *Context {
	if threads < 1 || run == nil {
		threads = 1
	}
	if run == nil {
		run = serial
	}
	c := &Context{threads: threads, run: run, packA: make([][]float32, threads), ownB: make([][]float32, threads)}
	return c
}

func serial(parts int, fn func(int)) {
	for i := range parts {
		fn(i)
	}
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C. op(A) is m×k: A is stored
// m×k with row stride lda >= k, or k×m with lda >= m when transA is set.
// op(B) is k×n: B is k×n with ldb >= n, or n×k with ldb >= k when transB is
// set. C is m×n with ldc >= n. When beta is 0, C is not read (NaNs in it do
// not propagate). It returns an error, and writes nothing, when a size or
// slice length is inconsistent.
func (c *Context) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, cm []float32, ldc int) error {
	if err := checkArgs(transA, transB, m, n, k, a, lda, b, ldb, cm, ldc); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, cm, ldc)
		return nil
	}
	if m <= fewRows && n <= nc {
		c.sgemmFewRows(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, cm, ldc)
		return nil
	}
	c.ensure(min(n, nc))
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			bet := beta
			if pc > 0 {
				bet = 1
			}
			c.packBBlock(transB, b, ldb, pc, kb, jc, nb)
			c.multiplyBlock(transA, a, lda, m, pc, kb, jc, nb, alpha, bet, cm, ldc)
		}
	}
	return nil
}

func checkArgs(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, cm []float32, ldc int) error {
	if m < 0 || n < 0 || k < 0 {
		return fmt.Errorf("gemm: negative size m=%d n=%d k=%d", m, n, k)
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	if err := checkMat("A", a, ar, ac, lda); err != nil {
		return err
	}
	if err := checkMat("B", b, br, bc, ldb); err != nil {
		return err
	}
	return checkMat("C", cm, m, n, ldc)
}

func checkMat(name string, s []float32, rows, cols, ld int) error {
	if ld < max(cols, 1) {
		return fmt.Errorf("gemm: %s: leading dimension %d < %d columns", name, ld, cols)
	}
	if rows == 0 || cols == 0 {
		return nil
	}
	if need := (rows-1)*ld + cols; len(s) < need {
		return fmt.Errorf("gemm: %s: %d elements, need %d for %d×%d (stride %d)", name, len(s), need, rows, cols, ld)
	}
	return nil
}

// scaleC sets C = beta·C (C = 0 when beta is 0, without reading C).
func scaleC(m, n int, beta float32, cm []float32, ldc int) {
	for i := range m {
		row := cm[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// ensure sizes the packing buffers for B blocks of up to nbMax columns.
func (c *Context) ensure(nbMax int) {
	needB := kc * roundUp(nbMax, nr)
	if len(c.packB) < needB {
		c.packB = make([]float32, needB)
	}
	c.ensureA()
}

// ensureA sizes the per-thread A buffers for both paths.
func (c *Context) ensureA() {
	for t := range c.packA {
		if len(c.packA[t]) < roundUp(max(mc, fewRows), mr)*kc {
			c.packA[t] = make([]float32, roundUp(max(mc, fewRows), mr)*kc)
		}
	}
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }
