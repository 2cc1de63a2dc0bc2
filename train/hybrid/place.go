// Package hybrid trains when the GPU is short of memory: the replay driver
// around the same step, with the features served by a tiered store
// (featstore.Tiered) whose cache takes what the budget leaves once the
// topology, the tables and the step's envelope are placed, and whose other
// rows stay in host memory that the gather kernel reads in place over PCIe,
// inside the replayed graph. The cache holds the rows a training step is
// expected to gather most often (RankByAccess). A graph that does not fit
// beside the step is sampled through a pointer table over lists in host
// memory, read in place too, the highest-degree vertices' lists copied to
// the GPU (topology.go). A typed graph gets a tiered store per type with
// features, whose caches share the budget by one ranking (typed.go).
package hybrid

import (
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/featstore"
)

// Placement is what goes where under a GPU memory budget, in bytes.
type Placement struct {
	Budget    int64 // the GPU memory the run may use
	Resident  int64 // already in backend memory before the cache: topology, labels, degrees, slot table, plan, model
	Envelope  int64 // of Resident: the step's plan and model workspace at its envelope
	Margin    int64 // kept free for scratch the allocator does not see (library workspaces, graph memory)
	RowBytes  int64 // one feature row
	Rows      int64 // feature rows in all
	CacheRows int64 // rows in the GPU cache
	HostRows  int64 // rows read from host memory
	BandRows  int64 // of HostRows, the rows ranked next copied in rank order into a band of host memory
	// DiskRows are the rows read from DiskFile when a step needs them
	// (features left on disk), HostMemory the cap of the disk tiers' host
	// memory in bytes, and Host that memory by part (every type's summed):
	// as planned, then, once filled, as the stores hold it.
	DiskRows   int64
	DiskFile   string
	HostMemory int64
	Host       featstore.HostUse
	// Topology is where the graph is (Resident holds its GPU part); zero
	// where the driver was not told (a Tier of NewTier).
	Topology TopologyPlan
	// Types are a typed graph's feature tiers, per vertex type in the
	// dataset's order; Rows, CacheRows and HostRows then sum them, and
	// RowBytes is 0 (the types' rows differ). Nil for one type.
	Types []TypePlacement
}

// TypePlacement is one vertex type's share of a typed graph's feature
// tiers.
type TypePlacement struct {
	Name      string
	RowBytes  int64 // one feature row; 0: the type has no features (its learned rows are resident)
	Rows      int64 // the type's vertices
	CacheRows int64 // rows in the type's GPU cache
	HostRows  int64 // rows read from host memory
	// DiskRows are the rows read from DiskFile when a step needs them
	// (the type's features left on disk; "" where they are in memory).
	DiskRows int64
	DiskFile string
}

// CacheBytes is the GPU cache's size (every type's caches for a typed
// graph).
func (p Placement) CacheBytes() int64 {
	if p.Types == nil {
		return p.CacheRows * p.RowBytes
	}
	var b int64
	for _, t := range p.Types {
		b += t.CacheRows * t.RowBytes
	}
	return b
}

// splitHost divides the rows outside the cache between a host tier of at
// most host rows (hostMemory bytes, as asked) and the feature file.
func (p *Placement) splitHost(host, hostMemory int64, file string) {
	out := p.Rows - p.CacheRows
	p.HostRows = min(out, host)
	p.DiskRows, p.DiskFile, p.HostMemory = out-p.HostRows, file, hostMemory
}

// Peak is the planned GPU memory: what is resident, the cache and the margin.
func (p Placement) Peak() int64 { return p.Resident + p.CacheBytes() + p.Margin }

// DefaultBand is the band's host memory when Options.Band is 0. On
// papers-sim at a tenth cached (H200, docs/perf.md) a band of 512 MiB
// made 884 steps/s, 1 GiB 989, 2 GiB 1017 and every row outside the cache
// (3.7 GB) 1022, against 618 without one: past 1 GiB a band costs host
// memory for little.
const DefaultBand = 1 << 30

// DefaultStagedBand is the host memory of the disk tier's host tier read
// in place with StageHost when Options.Band is 0: papers-sim, a tenth
// cached, three steps ahead (H200, docs/perf.md): 512 MiB in place ran
// 1402 steps/s (786a5de), 384 and 256 MiB 1400 and 1391, every row staged
// 1317 (2251655) and 1 GiB 943 (3a62902); the host's copies took about
// 0.3 ms a gather against 0.63 with every row staged.
const DefaultStagedBand = 512 << 20

// bandRows is the rows a band of band bytes (Options.Band; 0: def)
// holds.
func bandRows(band, def, rowBytes int64) int64 {
	if band == 0 {
		band = def
	}
	return max(band, 0) / max(rowBytes, 1)
}

// DefaultMargin is what Place keeps free of a budget: 3%, at least 256 MiB.
func DefaultMargin(budget int64) int64 { return max(256<<20, budget*3/100) }

// Place decides how many feature rows the GPU cache takes: all that fit in
// budget - resident - margin, at most rows, or exactly want when want >= 0
// (an explicit cache size; it must fit). It is an error when even an empty
// cache does not fit, saying how much would be needed.
func Place(budget, resident, envelope, margin, rowBytes, rows, want int64) (Placement, error) {
	p := Placement{Budget: budget, Resident: resident, Envelope: envelope, Margin: margin, RowBytes: rowBytes, Rows: rows}
	free, err := roomLeft(budget, resident, envelope, margin)
	if err != nil {
		return p, err
	}
	fit := min(rows, free/max(rowBytes, 1))
	switch {
	case want > fit:
		return p, fmt.Errorf("cache-rows: %d rows (%s) do not fit: the budget leaves room for %d", want, mib(want*rowBytes), fit)
	case want >= 0:
		p.CacheRows = want
	default:
		p.CacheRows = fit
	}
	p.HostRows = rows - p.CacheRows
	return p, nil
}

// roomLeft is what a budget leaves for feature caches once resident bytes
// (of which the step's envelope) and the margin are placed; an error
// when even empty caches do not fit, saying how much would be needed.
func roomLeft(budget, resident, envelope, margin int64) (int64, error) {
	free := budget - resident - margin
	if free < 0 {
		step := ""
		if envelope > 0 {
			step = fmt.Sprintf(", of which the step's envelope %s", mib(envelope))
		}
		return 0, fmt.Errorf("gpu-memory: the budget of %s does not hold the topology, tables and step (%s%s) and the %s margin: at least %s is needed, with every feature row in host memory",
			mib(budget), mib(resident), step, mib(margin), mib(resident+margin))
	}
	return free, nil
}

// Print writes the placement, one item a line.
func (p Placement) Print(w io.Writer) {
	fmt.Fprintf(w, "hybrid plan (GPU budget %s):\n", mib(p.Budget))
	p.Topology.print(w)
	envelope := "" // none without a step (a placement made before the driver provisions one)
	if p.Envelope > 0 {
		envelope = fmt.Sprintf(" (step envelope %s)", mib(p.Envelope))
	}
	fmt.Fprintf(w, "  topology, labels, degrees, slot table, plan, model: %s%s\n", mib(p.Resident), envelope)
	if p.Types == nil {
		fmt.Fprintf(w, "  feature cache: %d of %d rows (%.1f%%), %s\n", p.CacheRows, p.Rows, percent(p.CacheRows, p.Rows), mib(p.CacheBytes()))
		fmt.Fprintf(w, "  host memory, read in place over PCIe: %d rows, %s\n", p.HostRows, mib(p.HostRows*p.RowBytes))
		if p.BandRows > 0 {
			fmt.Fprintf(w, "  of them the %d ranked next (%.1f%% of the rows) copied in rank order into a band of host memory, read faster: %s\n",
				p.BandRows, percent(p.BandRows, p.Rows), mib(p.BandRows*p.RowBytes))
		}
	}
	if p.Types != nil && p.HostMemory > 0 {
		fmt.Fprintf(w, "  (the host tiers' rows are the next ranked by degree per byte that --host-memory %s holds beside the stagings and tables)\n", mib(p.HostMemory))
	}
	if p.DiskFile != "" && p.HostMemory > 0 {
		fmt.Fprintf(w, "  (the host tier's rows are the next ranked that --host-memory %s holds beside the staging and tables)\n", mib(p.HostMemory))
	}
	if p.DiskFile != "" {
		fmt.Fprintf(w, "  disk, read from %s when a step needs them, into pinned staging: %d rows, %s\n", p.DiskFile, p.DiskRows, mib(p.DiskRows*p.RowBytes))
	}
	if p.Host != (featstore.HostUse{}) {
		printHost(w, p.Host, p.HostMemory)
	}
	for _, t := range p.Types {
		if t.RowBytes == 0 {
			fmt.Fprintf(w, "  %s: no features; its %d learned rows resident (counted above)\n", t.Name, t.Rows)
			continue
		}
		disk := ""
		if t.DiskFile != "" {
			disk = fmt.Sprintf("; disk, read from %s when a step needs them: %d rows, %s", t.DiskFile, t.DiskRows, mib(t.DiskRows*t.RowBytes))
		}
		fmt.Fprintf(w, "  %s: feature cache: %d of %d rows (%.1f%%), %s; host memory, read in place over PCIe: %d rows, %s%s\n",
			t.Name, t.CacheRows, t.Rows, percent(t.CacheRows, t.Rows), mib(t.CacheRows*t.RowBytes), t.HostRows, mib(t.HostRows*t.RowBytes), disk)
	}
	fmt.Fprintf(w, "  margin: %s; planned peak %s\n", mib(p.Margin), mib(p.Peak()))
}

// printHost writes the disk tiers' host memory by part and the cap.
func printHost(w io.Writer, u featstore.HostUse, hostMemory int64) {
	limit := "no --host-memory"
	if hostMemory > 0 {
		limit = "--host-memory " + mib(hostMemory)
	}
	fmt.Fprintf(w, "  disk tier's host memory: host tier %d rows, %s; staging for %d rows of a step, %s; tables and read buffers %s; in all %s (%s)\n",
		u.HostRows, mib(u.HostTier), u.StageRows, mib(u.Staging), mib(u.Tables), mib(u.Total()), limit)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB (%d bytes)", float64(b)/(1<<20), b) }

// print writes the graph's tiers, a line each (nothing for a zero plan).
func (t TopologyPlan) print(w io.Writer) {
	switch {
	case t.Vertices == 0:
	case !t.Host:
		fmt.Fprintf(w, "  topology: the whole graph in GPU memory, %d vertices and %d edges: %s\n", t.Vertices, t.Edges, mib(t.Bytes))
	default:
		fmt.Fprintf(w, "  topology: a pointer table over %d vertices in GPU memory: %s\n", t.Vertices, mib(t.Bytes))
		fmt.Fprintf(w, "  neighbour lists in GPU memory (the highest degrees): %d vertices (%.1f%%), %d edges (%.1f%%), %s\n",
			t.GPULists, percent(t.GPULists, t.Vertices), t.GPUEdges, percent(t.GPUEdges, t.Edges), mib(t.GPUListBytes()))
		fmt.Fprintf(w, "  neighbour lists in host memory, read in place over PCIe: %d vertices, %d edges, %s\n",
			t.Vertices-t.GPULists, t.Edges-t.GPUEdges, mib(t.ListBytes()-t.GPUListBytes()))
	}
}

func percent(part, whole int64) float64 { return 100 * float64(part) / float64(max(whole, 1)) }
