// Package mpi is a backend.Collective for CPU processes over Open MPI,
// loaded at run time with purego (libmpi.so.40): the processes are started
// by mpirun (or Slurm's srun with Open MPI), and a reduction is one
// MPI_Allreduce in place on COMM_WORLD. The handles are the addresses of
// Open MPI's predefined globals (ompi_mpi_comm_world, ompi_mpi_float,
// ompi_mpi_op_sum, ...), and MPI_IN_PLACE is (void*)1, as its mpi.h defines
// them; other MPI implementations are not bound.
package mpi

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/fanout-gnn/fanout/backend"
)

// Values from Open MPI's mpi.h.
const (
	success          = 0
	threadSerialized = 2 // MPI_THREAD_SERIALIZED
	inPlace          = 1 // MPI_IN_PLACE is (void *) 1
)

var sonames = []string{"libmpi.so.40", "libmpi.so"}

// MPI is the loaded library, initialised.
type MPI struct {
	init, initialized, finalize, rank, size, allreduce, alltoall, abort uintptr
	commWorld, float, int32t, opSum, opMax                              uintptr
	mu                                                                  sync.Mutex // SERIALIZED: one call at a time
}

// Open loads Open MPI and initialises it (MPI_Init_thread, serialized
// calls). Only one MPI is opened per process.
func Open() (*MPI, error) {
	var h uintptr
	var tried []string
	for _, n := range sonames {
		var err error
		if h, err = purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_GLOBAL); err == nil {
			break
		}
		tried = append(tried, n)
	}
	if h == 0 {
		return nil, fmt.Errorf("MPI: Open MPI's library not found (tried %s); install it (Debian: openmpi-bin) and start the processes with mpirun", strings.Join(tried, ", "))
	}
	m := &MPI{}
	for name, dst := range map[string]*uintptr{
		"MPI_Init_thread": &m.init, "MPI_Initialized": &m.initialized, "MPI_Finalize": &m.finalize,
		"MPI_Comm_rank": &m.rank, "MPI_Comm_size": &m.size, "MPI_Allreduce": &m.allreduce,
		"MPI_Alltoall": &m.alltoall, "MPI_Abort": &m.abort,
		"ompi_mpi_comm_world": &m.commWorld, "ompi_mpi_float": &m.float, "ompi_mpi_int": &m.int32t,
		"ompi_mpi_op_sum": &m.opSum, "ompi_mpi_op_max": &m.opMax,
	} {
		p, err := purego.Dlsym(h, name)
		if err != nil || p == 0 {
			return nil, fmt.Errorf("MPI: symbol %s not found (is this Open MPI?)", name)
		}
		*dst = p
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var done int32
	purego.SyscallN(m.initialized, uintptr(unsafe.Pointer(&done)))
	if done == 0 {
		var provided int32
		if r, _, _ := purego.SyscallN(m.init, 0, 0, threadSerialized, uintptr(unsafe.Pointer(&provided))); int32(r) != success {
			return nil, fmt.Errorf("MPI: MPI_Init_thread failed (code %d)", int32(r))
		}
		if provided < threadSerialized {
			return nil, fmt.Errorf("MPI: the library gives thread level %d, fanout needs serialized calls (%d)", provided, threadSerialized)
		}
	}
	return m, nil
}

// Rank and Size of COMM_WORLD.
func (m *MPI) Rank() int { return m.query(m.rank) }
func (m *MPI) Size() int { return m.query(m.size) }

func (m *MPI) query(fn uintptr) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	var v int32
	purego.SyscallN(fn, m.commWorld, uintptr(unsafe.Pointer(&v)))
	return int(v)
}

// Finalize ends MPI (once, at the end of the process).
func (m *MPI) Finalize() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, _, _ := purego.SyscallN(m.finalize); int32(r) != success {
		return fmt.Errorf("MPI: MPI_Finalize failed (code %d)", int32(r))
	}
	return nil
}

// Abort ends every process of the job with code (MPI_Abort on
// COMM_WORLD): a rank that fails stops its peers, which would otherwise
// wait in their next collective for ever. It does not return when the
// library honours it. It takes no lock: the failing rank is in no
// collective, and a peer's is what it must end.
func (m *MPI) Abort(code int) {
	purego.SyscallN(m.abort, m.commWorld, uintptr(code))
}

// allReduce reduces count values at p in place across COMM_WORLD.
func (m *MPI) allReduce(p unsafe.Pointer, count int, dtype, op uintptr) error {
	if count > math.MaxInt32 {
		return fmt.Errorf("MPI: %d values in one reduction", count)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, _, _ := purego.SyscallN(m.allreduce, inPlace, uintptr(p), uintptr(count), dtype, op, m.commWorld); int32(r) != success {
		return fmt.Errorf("MPI: MPI_Allreduce failed (code %d)", int32(r))
	}
	return nil
}

// allToAll sends count values of dtype at send+p·count to rank p and
// receives rank p's at recv+p·count, across COMM_WORLD (MPI_Alltoall).
func (m *MPI) allToAll(send, recv unsafe.Pointer, count int, dtype uintptr) error {
	if count > math.MaxInt32 {
		return fmt.Errorf("MPI: %d values in one chunk", count)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, _, _ := purego.SyscallN(m.alltoall, uintptr(send), uintptr(count), dtype, uintptr(recv), uintptr(count), dtype, m.commWorld); int32(r) != success {
		return fmt.Errorf("MPI: MPI_Alltoall failed (code %d)", int32(r))
	}
	return nil
}

// Comm is this process's rank as a backend.Collective over be (a CPU
// backend): each reduction reads the buffer, all-reduces it in place with
// MPI and writes it back, as a host function in be's op order.
type Comm struct {
	m   *MPI
	be  backend.Backend
	err error
}

var _ backend.Collective = (*Comm)(nil)

// NewComm binds m to be, which must run host functions in op order.
func NewComm(m *MPI, be backend.Backend) (*Comm, error) {
	if _, ok := be.(backend.HostFuncs); !ok {
		return nil, fmt.Errorf("MPI: backend %s cannot run host functions in op order", be.Name())
	}
	return &Comm{m: m, be: be}, nil
}

func (c *Comm) Rank() int    { return c.m.Rank() }
func (c *Comm) Size() int    { return c.m.Size() }
func (c *Comm) Close() error { return nil }

// Err is the first failed reduction's error.
func (c *Comm) Err() error { return c.err }

// AllReduceSum sums the F32 buffer across the processes.
func (c *Comm) AllReduceSum(buf backend.Buffer) {
	c.be.(backend.HostFuncs).HostFunc(func() {
		c.fail(allReduce(c, buf, make([]float32, buf.Len()), c.m.float, c.m.opSum))
	})
}

// AllReduceMax takes the maximum of the I32 buffer across the processes.
func (c *Comm) AllReduceMax(buf backend.Buffer) {
	c.be.(backend.HostFuncs).HostFunc(func() {
		c.fail(allReduce(c, buf, make([]int32, buf.Len()), c.m.int32t, c.m.opMax))
	})
}

// allReduce reads buf into h, reduces h in place across the processes
// with op and writes it back to buf.
func allReduce[T int32 | float32](c *Comm, buf backend.Buffer, h []T, dtype, op uintptr) error {
	c.be.Read(h, buf, 0)
	err := c.m.allReduce(unsafe.Pointer(unsafe.SliceData(h)), len(h), dtype, op)
	c.be.Write(buf, 0, h)
	return err
}

// AllToAll hands chunk p of send to process p, as chunk Rank() of its recv
// (I32 or F32; see backend.Collective), with one MPI_Alltoall.
func (c *Comm) AllToAll(send, recv backend.Buffer, chunk int) {
	c.be.(backend.HostFuncs).HostFunc(func() {
		n := c.Size() * chunk
		switch {
		case chunk < 0 || send.DType() != recv.DType() || send.Len() < n || recv.Len() < n:
			c.fail(fmt.Errorf("MPI: AllToAll of chunks of %d from %d %s to %d %s values over %d processes", chunk, send.Len(), send.DType(), recv.Len(), recv.DType(), c.Size()))
		case send.DType() == backend.F32:
			c.fail(allToAll(c, send, recv, make([]float32, n), make([]float32, n), c.m.float))
		case send.DType() == backend.I32:
			c.fail(allToAll(c, send, recv, make([]int32, n), make([]int32, n), c.m.int32t))
		default:
			c.fail(fmt.Errorf("MPI: AllToAll of %s values (want I32 or F32)", send.DType()))
		}
	})
}

// allToAll reads send into s, exchanges it into r and writes r to recv.
func allToAll[T int32 | float32](c *Comm, send, recv backend.Buffer, s, r []T, dtype uintptr) error {
	c.be.Read(s, send, 0)
	if err := c.m.allToAll(unsafe.Pointer(unsafe.SliceData(s)), unsafe.Pointer(unsafe.SliceData(r)), len(s)/c.Size(), dtype); err != nil {
		return err
	}
	c.be.Write(recv, 0, r)
	return nil
}

// fail keeps the first error.
func (c *Comm) fail(err error) {
	if err != nil && c.err == nil {
		c.err = err
	}
}
