package featstore

import (
	"fmt"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// TestDiskHostBudget: for a budget that holds every row beside the
// staging and tables, part of them, none, or a byte less than the
// staging and tables, FitHost gives the host tier the rows the budget
// leaves (all where it can, exactly the rows the rest pays for where it
// cannot, none, or not ok), and the store Fill makes holds exactly the
// host memory PlanHost said (host tier, staging and tables, measured
// from its buffers), within the budget; its gathers give the table's
// rows. So with the host tier's rows staged too (StageHost), whose
// staging holds a gather's rows outside the cache whatever the host tier,
// so that every host tier row costs exactly a row of bytes.
func TestDiskHostBudget(t *testing.T) {
	for _, stage := range []bool{false, true} {
		t.Run(fmt.Sprint("stage-host=", stage), func(t *testing.T) { checkHostBudget(t, stage) })
	}
}

func checkHostBudget(t *testing.T, stageHost bool) {
	const rows, dim, reserve = 300, 6, 40
	f32, _, _, ids := tables(rows, dim)
	order := strided(rows, 11)
	be := cpu.New(1)
	for _, dt := range []backend.DType{backend.F32, backend.BF16} {
		rb := int64(dim * dt.Size())
		for _, cached := range []int{0, 50, rows} {
			d := newBudgetDisk(t, be, f32, dim, order, dt, reserve, stageHost)
			none, all := d.PlanHost(cached, 0).Total(), d.PlanHost(cached, rows).Total()
			if left := int64(rows - min(cached, rows)); stageHost && all != none+left*rb {
				t.Errorf("%s, cache %d: host rows staged, a host tier of all %d rows outside the cache takes %d bytes more than none, want a row each", dt, cached, left, all-none)
			}
			d.Free()
			left := int64(rows - min(cached, rows))
			for _, c := range []struct {
				budget, host int64
				ok           bool
			}{
				{all, left, true}, {2 * all, left, true}, {none + 17*rb + rb/2, min(17, left), true}, {none, 0, true}, {none - 1, 0, false},
			} {
				name := fmt.Sprintf("%s, cache %d, budget %d", dt, cached, c.budget)
				d := newBudgetDisk(t, be, f32, dim, order, dt, reserve, stageHost)
				defer d.Free()
				h, ok := d.FitHost(c.budget, cached)
				if ok != c.ok || h != c.host {
					t.Fatalf("%s: FitHost %d rows (ok %t), want %d (ok %t)", name, h, ok, c.host, c.ok)
				}
				if !ok {
					continue
				}
				d.SetHostRows(h)
				plan := d.PlanHost(cached, h)
				if err := d.Fill(cached); err != nil {
					t.Fatal(err)
				}
				got := d.HostUse()
				if got != plan || got.Total() > c.budget || got.HostRows != h {
					t.Errorf("%s: holds %+v (%d bytes), planned %+v (%d), budget %d", name, got, got.Total(), plan, plan.Total(), c.budget)
				}
				checkRows(t, name, gatherAll(t, be, d, ids[:reserve]), f32, dt, dim, ids[:reserve])
			}
		}
	}
}

// newBudgetDisk is a disk store over f32's rows, reserved for gathers of
// reserve rows, its host tier's rows staged where stageHost says.
func newBudgetDisk(t *testing.T, be backend.Backend, f32 []float32, dim int, order []int32, dt backend.DType, reserve int, stageHost bool) *Disk {
	t.Helper()
	d, err := NewDisk(be, DiskConfig{File: fileOf(f32, dim), FileType: backend.F32, Readers: 3, StageHost: stageHost}, int64(len(f32)/dim), dim, order, dt)
	if err != nil {
		t.Fatal(err)
	}
	d.Reserve(reserve)
	return d
}

// strided is a ranking of rows vertices: i·k modulo rows (k prime to
// rows; k = -1: vertex 0, then the others from the last down).
func strided(rows, k int) []int32 {
	order := make([]int32, rows)
	for i := range order {
		order[i] = int32(((i*k)%rows + rows) % rows)
	}
	return order
}

// checkRows checks gathered rows against the table's rows of ids, held
// as dt.
func checkRows(t *testing.T, name string, got, f32 []float32, dt backend.DType, dim int, ids []int32) {
	t.Helper()
	for i, v := range ids {
		for j := range dim {
			want := f32[int(v)*dim+j]
			if dt == backend.BF16 {
				want = backend.BF16Float(backend.ToBF16([]float32{want})[0])
			}
			if g := got[i*dim+j]; g != want {
				t.Fatalf("%s: row %d (vertex %d) value %d: %v, want %v", name, i, v, j, g, want)
			}
		}
	}
}
