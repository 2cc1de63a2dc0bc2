package mpi

import (
	"os"
	"os/exec"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// TestAllToAll runs itself as two processes under mpirun; each sends
// rank-stamped I32 and F32 chunks and checks it gets chunk r of every
// rank's, in rank order, and that the all-reduce still works after them.
func TestAllToAll(t *testing.T) {
	if os.Getenv("FANOUT_MPI_CHILD") != "" {
		allToAllChild(t)
		return
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not found (Debian: openmpi-bin); CI installs it: " + err.Error())
	}
	cmd := exec.Command("mpirun", "-n", "2", "--oversubscribe", os.Args[0], "-test.run=^TestAllToAll$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FANOUT_MPI_CHILD=1", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mpirun: %v\n%s", err, out)
	}
}

func allToAllChild(t *testing.T) {
	m, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Finalize()
	be := cpu.New(1)
	c, err := NewComm(m, be)
	if err != nil {
		t.Fatal(err)
	}
	const chunk = 3
	n, r := c.Size(), c.Rank()
	si, sf := make([]int32, n*chunk), make([]float32, n*chunk)
	for i := range si {
		si[i], sf[i] = int32(100*r+i), float32(r)+float32(i)/64
	}
	bi, _ := be.Upload(si)
	bf, _ := be.Upload(sf)
	ri, _ := be.Alloc(backend.I32, n*chunk)
	rf, _ := be.Alloc(backend.F32, n*chunk)
	c.AllToAll(bi, ri, chunk)
	c.AllToAll(bf, rf, chunk)
	sum, _ := be.Upload([]float32{1})
	c.AllReduceSum(sum)
	gi, gf, gs := make([]int32, n*chunk), make([]float32, n*chunk), make([]float32, 1)
	be.Read(gi, ri, 0)
	be.Read(gf, rf, 0)
	be.Read(gs, sum, 0)
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	for p := range n {
		for k := range chunk {
			if w := int32(100*p + r*chunk + k); gi[p*chunk+k] != w {
				t.Fatalf("rank %d, from %d, element %d: %d, want %d", r, p, k, gi[p*chunk+k], w)
			}
			if w := float32(p) + float32(r*chunk+k)/64; gf[p*chunk+k] != w {
				t.Fatalf("rank %d, from %d, element %d: %v, want %v", r, p, k, gf[p*chunk+k], w)
			}
		}
	}
	if gs[0] != float32(n) {
		t.Fatalf("sum %v, want %d", gs[0], n)
	}
}
