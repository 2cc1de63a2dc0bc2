// Package backendtest is the conformance suite every backend runs: each op
// is checked against a straightforward float64 reference written here (or,
// for sampling and relabelling, against package sample's reference, which
// every backend must reproduce exactly), on random inputs drawn from fixed
// seeds, with outputs poisoned beforehand so that unwritten rows are caught,
// and with live counts below capacity. Only rows below the live count are
// checked (what a backend leaves past the count is unspecified), except that
// Linear and LinearBackwardData must leave rows past the count untouched
// when they accumulate.
// Backends implementing backend.Capturer also run a capture-and-replay test.
//
// Tolerances are stated per op as a bound on |got - want| relative to a
// scale: the magnitude of the result for elementwise ops (1e-5), and the
// sum of magnitudes of the terms for sums (1e-4 for matmul and aggregation,
// so that a GPU that reorders sums, with TF32 off, passes). A NaN or an
// infinity always fails. Run logs, per tolerance, the largest error its
// checks measured on the backend, the figure its comment (compare.go)
// states the tolerance's multiple of.
//
// Use it from a backend's test:
//
//	func TestConformance(t *testing.T) {
//		backendtest.Run(t, func(t *testing.T) backend.Backend { return mybackend.New() })
//	}
package backendtest

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
)

// Run runs every conformance subtest. newBackend is called once per subtest
// and may call t.Skip (no device) or register t.Cleanup.
func Run(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	tests := []struct {
		name string
		fn   func(e *env)
	}{
		{"Memory", testMemory},
		{"MemoryStats", testMemoryStats},
		{"Gather", testGather},
		{"Linear", testLinear},
		{"LinearBackwardData", testLinearBackwardData},
		{"LinearBackwardWeight", testLinearBackwardWeight},
		{"SparseInputProducts", testSparseInputProducts},
		{"BiasActDropout", testBiasActDropout},
		{"BiasActDropoutBackward", testBiasActDropoutBackward},
		{"SoftmaxCrossEntropy", testSoftmaxCrossEntropy},
		{"Argmax", testArgmax},
		{"Adam", testAdam},
		{"AddCount", testAddCount},
		{"AdamSkip", testAdamSkip},
		{"AdamLRScale", testAdamLRScale},
		{"SparseAdam", testSparseAdam},
		{"SparseAdamAll", testSparseAdamAll},
		{"SparseAdamSkip", testSparseAdamSkip},
		{"AddCountAdam", testAddCountAdam},
		{"SliceSeeds", testSliceSeeds},
		{"FlagOverflow", testFlagOverflow},
		{"Accumulate", testAccumulate},
		{"AddCountAccumulate", testAddCountAccumulate},
		{"ScaleShare", testScaleShare},
		{"GatherTiered", testGatherTiered},
		{"GatherTieredMisses", testGatherTieredMisses},
		{"AggregateConcatTiered", testAggregateConcatTiered},
		{"SplitTiers", testSplitTiers},
		{"GatherListed", testGatherListed},
		{"AwaitHost", testAwaitHost},
		{"GatherBF16", testGatherBF16},
		{"GINWeights", testGINWeights},
		{"DotSum", testDotSum},
		{"BatchNormStats", testBatchNormStats},
		{"BatchNormStatsBias", testBatchNormStatsBias},
		{"NormApply", testNormApply},
		{"NormApplyAct", testNormApplyAct},
		{"NormBackward", testNormBackward},
		{"NormBackwardAct", testNormBackwardAct},
		{"NormRunning", testNormRunning},
		{"NormSync", testNormSync},
		{"NormShapes", testNormShapes},
		{"LayerMax", testLayerMax},
		{"EdgeSeeds", testEdgeSeeds},
		{"BuildExclusion", testBuildExclusion},
		{"SampleExcluding", testSampleExcluding},
		{"SampleExcludingViews", testSampleExcludingViews},
		{"GroupRows", testGroupRows},
		{"PairProduct", testPairProduct},
		{"PairLoss", testPairLoss},
		{"PairRanks", testPairRanks},
		{"LevelCounts", testLevelCounts},
		{"HeadDot", testHeadDot},
		{"HeadDotBackward", testHeadDotBackward},
		{"HeadDots", testHeadDots},
		{"HeadDotBackwardPair", testHeadDotBackwardPair},
		{"EdgeSoftmax", testEdgeSoftmax},
		{"EdgeSoftmaxBackward", testEdgeSoftmaxBackward},
		{"HeadAggregate", testHeadAggregate},
		{"HeadAggregateBackward", testHeadAggregateBackward},
		{"GradientsApart", testGradientsApart},
		{"SharedAggregate", testSharedAggregate},
		{"SharedAggregateBackward", testSharedAggregateBackward},
		{"HeadLinear", testHeadLinear},
		{"SharedAggregateBF16", testSharedAggregateBF16},
		{"HeadLinearBF16", testHeadLinearBF16},
		{"ScoreProducts", testScoreProducts},
		{"LinearKeepsPaddingRows", testLinearKeepsPaddingRows},
		{"Capture", testCapture},
		{"MeanWeights", testMeanWeights},
		{"MeanWeightsAggregate", testMeanWeightsAggregate},
		{"GCNWeights", testGCNWeights},
		{"Aggregate", testAggregate},
		{"AggregateConcat", testAggregateConcat},
		{"AggregateConcatTable", testAggregateConcatTable},
		{"BF16Activations", testBF16Activations},
		{"BF16Products", testBF16Products},
		{"AggregateBackward", testAggregateBackward},
		{"Bipartite", testBipartite},
		{"TransposeBlock", testTransposeBlock},
		{"AggregateConcatBackward", testAggregateConcatBackward},
		{"SampleLayer", testSampleLayer},
		{"SampleLayerOverflow", testSampleLayerOverflow},
		{"MaskGraph", testMaskGraph},
		{"PeerGraph", testPeerGraph},
		{"PeerRows", testPeerRows},
		{"KeepRows", testKeepRows},
		{"Exchange", testExchange},
		{"ReplaceRows", testReplaceRows},
		{"AddRows", testAddRows},
		{"ScatterAddRows", testScatterAddRows},
		{"Axpy", testAxpy},
		{"Relabel", testRelabel},
		{"RelabelOverflow", testRelabelOverflow},
		{"RelabelStartAdd", testRelabelStartAdd},
		{"RelabelSpace", testRelabelSpace},
		{"RelabelSpaceOverflow", testRelabelSpaceOverflow},
		{"RelabelSpaceCapture", testRelabelSpaceCapture},
		{"CountAboveCapacity", testCountAboveCapacity},
		{"StickyErrors", testStickyErrors},
	}
	m := &measured{}
	defer m.log(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			be := newBackend(t)
			if be == nil {
				t.Fatal("newBackend returned nil")
			}
			tc.fn(newEnv(t, be, tc.name, m))
		})
	}
	for _, sc := range stickyCases {
		t.Run("StickyError/"+sc.op, func(t *testing.T) {
			be := newBackend(t)
			if be == nil {
				t.Fatal("newBackend returned nil")
			}
			e := newEnv(t, be, "StickyError/"+sc.op, m)
			sc.call(e)
			err := be.Sync()
			if err == nil || !strings.Contains(err.Error(), sc.op) || !strings.Contains(err.Error(), sc.arg) {
				t.Errorf("bad %s call: Sync returned %v, want an error naming %s and %q", sc.op, err, sc.op, sc.arg)
			}
		})
	}
}

// env bundles a subtest's backend, its random source and helpers that turn
// a failed call into a test failure.
type env struct {
	t        *testing.T
	be       backend.Backend
	rnd      *rand.Rand
	name     string    // the subtest's
	measured *measured // the errors the checks measured, for the summary
}

func newEnv(t *testing.T, be backend.Backend, name string, m *measured) *env {
	h := fnv.New64a()
	h.Write([]byte(name))
	return &env{t: t, be: be, rnd: rand.New(rand.NewPCG(0x5eed, h.Sum64())), name: name, measured: m}
}

// att, hot and tiered are the backend's op capabilities (backend.Attention,
// HotRows, TieredGather): a backend without one skips the tests of its
// ops, saying so.
func (e *env) att() backend.Attention       { return capability(e, backend.AttentionOf) }
func (e *env) hot() backend.HotRows         { return capability(e, backend.HotRowsOf) }
func (e *env) tiered() backend.TieredGather { return capability(e, backend.TieredOf) }

func capability[T any](e *env, of func(backend.Backend) (T, error)) T {
	e.t.Helper()
	x, err := of(e.be)
	if err != nil {
		e.t.Skip(err.Error())
	}
	return x
}

// peerGraphs, peerRows and exchanger are the backend's placement
// capabilities (backend.PeerGraphs, PeerRows, Exchanger): a backend without
// one skips the test, saying which it lacks.
func (e *env) peerGraphs() backend.PeerGraphs { return optional(e, backend.PeerGraphsOf, "PeerGraphs") }
func (e *env) peerRows() backend.PeerRows     { return optional(e, backend.PeerRowsOf, "PeerRows") }
func (e *env) exchanger() backend.Exchanger   { return optional(e, backend.ExchangerOf, "Exchanger") }

func optional[T comparable](e *env, of func(backend.Backend) T, name string) T {
	e.t.Helper()
	x := of(e.be)
	var none T
	if x == none {
		e.t.Skip("the backend has no " + name)
	}
	return x
}

// upload copies data (the backend may keep the slice) into a new buffer.
func (e *env) upload(data any) backend.Buffer {
	e.t.Helper()
	var c any
	switch d := data.(type) {
	case []float32:
		c = append([]float32(nil), d...)
	case []int32:
		c = append([]int32(nil), d...)
	case []int64:
		c = append([]int64(nil), d...)
	case []uint8:
		c = append([]uint8(nil), d...)
	case []uint16: // bfloat16 bits
		c = append([]uint16(nil), d...)
	default:
		e.t.Fatalf("upload: unsupported type %T", data)
	}
	b, err := e.be.Upload(c)
	if err != nil {
		e.t.Fatalf("Upload(%T): %v", data, err)
	}
	return b
}

// alloc returns a buffer of n elements filled with v.
func (e *env) alloc(dt backend.DType, n int, v float64) backend.Buffer {
	e.t.Helper()
	b, err := e.be.Alloc(dt, n)
	if err != nil {
		e.t.Fatalf("Alloc(%s, %d): %v", dt, n, err)
	}
	e.be.Fill(b, v)
	return b
}

// poison returns an F32 buffer of n NaNs (an output that must be written).
func (e *env) poison(n int) backend.Buffer { return e.alloc(backend.F32, n, math.NaN()) }

// poisonI32 returns an I32 buffer of n copies of -999.
func (e *env) poisonI32(n int) backend.Buffer { return e.alloc(backend.I32, n, -999) }

// count returns a Count with live value live and capacity cap, stored at a
// random offset of a small buffer (so that Off is exercised).
func (e *env) count(live, cap int) backend.Count {
	e.t.Helper()
	off := e.rnd.IntN(3)
	s := make([]int32, off+2)
	for i := range s {
		s[i] = -5
	}
	s[off] = int32(live)
	return backend.Count{Buf: e.upload(s), Off: off, Cap: cap}
}

// readCount returns the live int32 value of c.
func (e *env) readCount(c backend.Count) int {
	e.t.Helper()
	v := make([]int32, 1)
	e.be.Read(v, c.Buf, c.Off)
	e.sync()
	return int(v[0])
}

// clock returns a Rand with the given seed and stream and an uploaded clock.
func (e *env) rand(seed uint64, stream uint32, epoch, step int32) backend.Rand {
	return backend.Rand{Seed: seed, Stream: stream, Clock: e.upload([]int32{epoch, step})}
}

func (e *env) sync() {
	e.t.Helper()
	if err := e.be.Sync(); err != nil {
		e.t.Fatalf("Sync: %v", err)
	}
}

// readBack copies the first n elements of b to the host after a sync.
func readBack[T any](e *env, b backend.Buffer, n int) []T {
	e.t.Helper()
	out := make([]T, n)
	e.be.Read(out, b, 0)
	e.sync()
	return out
}

func (e *env) readF32(b backend.Buffer, n int) []float32 { return readBack[float32](e, b, n) }
func (e *env) readI32(b backend.Buffer, n int) []int32   { return readBack[int32](e, b, n) }
func (e *env) readU8(b backend.Buffer, n int) []uint8    { return readBack[uint8](e, b, n) }
func (e *env) readU16(b backend.Buffer, n int) []uint16  { return readBack[uint16](e, b, n) }

// randF32 returns n values uniform in [-scale, scale).
func (e *env) randF32(n int, scale float64) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32((2*e.rnd.Float64() - 1) * scale)
	}
	return s
}
