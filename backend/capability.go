package backend

import (
	"fmt"
	"time"

	"github.com/fanout-gnn/fanout/graph"
)

// MemoryStats is implemented by backends that track their memory use.
// Fallback when absent: memory figures are not reported.
type MemoryStats interface {
	// InUseBytes and PeakBytes count buffers made by Alloc and Upload.
	InUseBytes() int64
	PeakBytes() int64
	ResetPeak()
}

// Closer is implemented by backends that hold resources (device contexts,
// libraries). Fallback when absent: nothing to release.
type Closer interface {
	Close() error
}

// Capturer is implemented by backends that can record a sequence of ops
// once and replay it (CUDA graphs; the record package for any backend).
// Between BeginCapture and EndCapture ops are recorded, not run; Alloc,
// Upload, Write, Read and Sync are not allowed. Ops must read every runtime
// size from backend memory, since the recorded arguments are replayed as
// they were. Fallback when absent: the eager driver.
type Capturer interface {
	BeginCapture() error
	EndCapture() (Replay, error)
}

// Replay is a captured sequence of ops.
type Replay interface {
	// Launch enqueues one replay; errors are sticky, as for ops.
	Launch()
	// Close releases the captured sequence.
	Close() error
}

// Timer is implemented by backends that can time their own work in order
// (device events on CUDA). Fallback when absent: host clocks around Sync.
type Timer interface {
	// Mark enqueues a time stamp after the work issued so far.
	Mark() (Mark, error)
}

// Mark is a time stamp enqueued by Timer.Mark.
type Mark interface {
	// Since is the device time from an earlier mark to this one; it waits
	// for this mark to be reached.
	Since(earlier Mark) (time.Duration, error)
	Close()
}

// MemoryOf is be's MemoryStats, or, when it has none, one that reports zero
// bytes and ignores ResetPeak. Wrapping backends forward through it.
func MemoryOf(be Backend) MemoryStats {
	if m, ok := be.(MemoryStats); ok {
		return m
	}
	return noMemoryStats{}
}

type noMemoryStats struct{}

func (noMemoryStats) InUseBytes() int64 { return 0 }
func (noMemoryStats) PeakBytes() int64  { return 0 }
func (noMemoryStats) ResetPeak()        {}

// Collective is one rank's handle on a group of backends that train
// together: the GPUs of one host (NCCL), CPU devices in one process (an
// in-process reduction), or processes on several hosts. Its ops are issued
// on the rank's own backend like any other op: asynchronous, in that
// backend's order, and captured with the step where the backend captures.
// Every rank must issue the same collective ops in the same order.
type Collective interface {
	Rank() int // 0-based
	Size() int // number of ranks
	// AllReduceSum replaces the F32 buffer buf, on every rank, with the
	// element-wise sum of buf over all ranks.
	AllReduceSum(buf Buffer)
	// AllReduceMax replaces the I32 buffer buf, on every rank, with the
	// element-wise maximum of buf over all ranks.
	AllReduceMax(buf Buffer)
	// AllToAll sends chunk p of send (chunk elements from p·chunk) to
	// rank p, which receives it as chunk r (this rank) of recv. send and
	// recv hold Size()·chunk elements of one type, I32 or F32, and every
	// rank passes the same chunk.
	AllToAll(send, recv Buffer, chunk int)
	// Close releases the communicator.
	Close() error
}

// SumMax is implemented by collectives that sum a buffer and take the
// maximum of a few flag words in one round (the GPUs of one process over
// peer memory, cuda.PeerComm; the in-process CPU group): a data-parallel
// step then reduces its overflow flag with its gradients instead of in a
// collective of its own. Fallback when absent: AllReduceMax, then
// AllReduceSum.
type SumMax interface {
	// AllReduceSumMax is AllReduceSum(sum) and AllReduceMax(flag), flag an
	// I32 buffer of at most 4 words, in one round.
	AllReduceSumMax(sum, flag Buffer)
}

// GraphFreer is implemented by backends whose uploaded graphs hold memory
// until freed (CUDA). Fallback when absent: a graph lives as long as its
// backend.
type GraphFreer interface {
	// FreeGraph releases a graph made by UploadGraph (not a view of one,
	// such as MaskGraph's, which shares its memory).
	FreeGraph(g Graph)
}

// FreeGraph releases g, made by be's UploadGraph, when be (or the backend a
// wrapper forwards to) can; otherwise g stays until be closes.
func FreeGraph(be Backend, g Graph) {
	if f, ok := bottom(be).(GraphFreer); ok {
		f.FreeGraph(g)
	}
}

// PaddingScratch is implemented by backends whose ops multiply whole
// capacities (CUDA while capturing a step) and must otherwise stash the
// padding rows of a matrix summed over rows, zero them and put them back,
// because they may be someone's data. After ScratchPadding(buf), whenever
// buf as a whole (not a part of it) is an op's matrix with a live count,
// its rows past that count are the backend's to overwrite: it zeroes them
// in place. Declare buffers whose padding rows nobody reads (a layer's
// scratch, an activation gradient). Fallback when absent: nothing changes.
type PaddingScratch interface {
	ScratchPadding(buf Buffer)
}

// ScratchPadding declares buf's padding rows free to overwrite (see
// PaddingScratch) to be's bottom backend, when it asks for such
// declarations.
func ScratchPadding(be Backend, buf Buffer) {
	if p, ok := bottom(be).(PaddingScratch); ok && buf != nil {
		p.ScratchPadding(buf)
	}
}

// bottom is the backend at the bottom of be's wrappers (be itself when it
// wraps none).
func bottom(be Backend) Backend {
	for {
		w, ok := be.(interface{ Inner() Backend })
		if !ok {
			return be
		}
		be = w.Inner()
	}
}

// HostMapper is implemented by backends whose ops can read host memory in
// place (CUDA: pinned memory mapped into the device's address space, read
// over PCIe). A buffer it returns does not count as backend memory in
// MemoryStats. Without it, UploadHost falls back to Upload.
type HostMapper interface {
	UploadHost(data any) (Buffer, error)
}

// MapsHost reports whether the backend at the bottom of be's wrappers
// reads host memory in place (HostMapper): host memory it reads is then
// not its own, and rows laid out for the link (a tiered store's band) pay.
func MapsHost(be Backend) bool {
	_, ok := bottom(be).(HostMapper)
	return ok
}

// UploadHost makes data readable by be's ops from host memory when be can,
// and uploads it otherwise.
func UploadHost(be Backend, data any) (Buffer, error) {
	if h, ok := be.(HostMapper); ok {
		return h.UploadHost(data)
	}
	return be.Upload(data)
}

// HostFuncs is implemented by backends that can run a host function in the
// order of their ops: the CPU backend runs it at once, the record wrapper
// stores it in a capture in progress and runs it at every replay. An
// in-process collective uses it so that a reduction is one more op of the
// step.
type HostFuncs interface {
	HostFunc(fn func())
}

// Lists are neighbour lists resident on one backend (PeerGraphs), which
// the backends of its group may read.
type Lists interface {
	Lists() int // how many lists
}

// Where a PeerGraph finds a vertex's neighbour list.
const (
	ListLocal   uint8 = iota // among the vertices this backend owns (in its memory)
	ListReplica              // a copy this backend keeps of another's list
	ListRemote               // in a peer's memory, read in place
	ListHost                 // in host memory, read in place (over PCIe on a GPU; HostLists)
	ListKinds                // how many kinds there are
)

// ReadCounts are neighbour-list reads of a PeerGraph's sampling, by where
// the list lived.
type ReadCounts struct {
	Local   int64 `json:"local"`
	Replica int64 `json:"replica"`
	Remote  int64 `json:"remote"`
	Host    int64 `json:"host,omitempty"` // lists read from host memory (HostLists)
	// Reused are remote feature rows a gather took from the rows the
	// gather before it kept on this device, instead of reading them from
	// the peer again (PeerRows.KeepRows); they are not in Remote.
	Reused int64 `json:"reused,omitempty"`
}

// Plus is c and o added kind by kind.
func (c ReadCounts) Plus(o ReadCounts) ReadCounts {
	return ReadCounts{Local: c.Local + o.Local, Replica: c.Replica + o.Replica, Remote: c.Remote + o.Remote, Host: c.Host + o.Host, Reused: c.Reused + o.Reused}
}

// Lists is the number of list reads of every kind (Reused, which counts
// feature rows, aside).
func (c ReadCounts) Lists() int64 { return c.Local + c.Replica + c.Remote + c.Host }

// CountsOf turns counts indexed by kind (ListLocal ... ListHost) into
// ReadCounts.
func CountsOf(k [ListKinds]int64) ReadCounts {
	return ReadCounts{Local: k[ListLocal], Replica: k[ListReplica], Remote: k[ListRemote], Host: k[ListHost]}
}

// PeerGraphs is implemented by backends that sample from topology spread
// over the memories of a group of backends (the GPUs of a host reading
// each other's memory over NVLink or PCIe; CPU devices in one process) or
// kept in host memory (the hybrid mode's topology on the host).
// Fallback when absent: every device uploads the whole graph.
type PeerGraphs interface {
	// UploadLists makes the neighbour lists of the vertices ids (their
	// rows of csr, in csr's order) resident on this backend; list i is
	// ids[i]'s. They count in MemoryStats.
	UploadLists(csr *graph.CSR, ids []int32) (Lists, error)
	// HostLists makes the neighbour lists of ids readable by this
	// backend's sampling in host memory, in place (CUDA: pinned and mapped
	// into the device's address space, read over PCIe): csr's own indices
	// when ids are all vertices in order (registered where the driver
	// can; the caller must not modify them while the lists live), else a
	// copy of the rows in pinned memory. They do not count in
	// MemoryStats. List i is ids[i]'s.
	HostLists(csr *graph.CSR, ids []int32) (Lists, error)
	// FreeLists releases lists made by UploadLists or HostLists; no
	// PeerGraph may read them afterwards.
	FreeLists(l Lists)
	// PeerGraph is a graph of numNodes vertices in which vertex v's
	// neighbours are list index[v] of lists[at[v]] (made by this backend
	// or by a peer of its group), read where they live. SampleLayer
	// draws from it exactly as from the whole graph, and counts each
	// destination's list read under kind[v] (ListLocal ... ListHost).
	// Its pointer table (8 bytes a vertex), degrees (4), kinds (1) and
	// Relabel's table (8) count in MemoryStats.
	PeerGraph(numNodes int64, lists []Lists, at, index []int32, kind []uint8) (Graph, error)
	// Repoint points the vertices ids of g (a PeerGraph of this backend)
	// at lists: vertex ids[i] reads list i of lists from now on, counted
	// under kind. Each list must hold as many neighbours as the one it
	// replaces (the same vertex's list kept elsewhere), so samples do not
	// change. Call it between steps, not while a graph is captured.
	Repoint(g Graph, lists Lists, ids []int32, kind uint8) error
	// GraphReads are the list reads a PeerGraph's sampling has counted.
	GraphReads(g Graph) (ReadCounts, error)
}

// PeerGraphsOf is be's PeerGraphs, or nil when be (or the backend a
// wrapper forwards to) has none.
func PeerGraphsOf(be Backend) PeerGraphs {
	p, _ := bottom(be).(PeerGraphs)
	return p
}

// need is be's capability T (ownCapability), or an error that names be and
// what (the capability, in words and by its interface) when the backend at
// the bottom of be's wrappers lacks it.
func need[T any](be Backend, what string) (T, error) {
	x, ok := ownCapability[T](be)
	if !ok {
		return x, fmt.Errorf("backend %s lacks %s", be.Name(), what)
	}
	return x, nil
}
