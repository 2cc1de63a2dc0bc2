package hybrid

import (
	"context"
	"fmt"
	"io"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/featstore"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/hybrid/hot"
)

// HotOptions are the CPU-computed hot vertices (package hot).
type HotOptions = hot.Options

// HotStats are what the hot vertices cost and saved (package hot).
type HotStats = hot.Stats

// Options tune the hybrid driver.
type Options struct {
	Budget    int64 // GPU memory the run may use, in bytes; 0: no limit (every row cached)
	CacheRows int64 // rows in the GPU cache; < 0: as many as the budget leaves
	Margin    int64 // kept free of the budget; 0: DefaultMargin(Budget)
	Threads   int   // CPU threads of the rankings; 0: all
	// FeatureDType holds both tiers as backend.BF16 (half the PCIe bytes)
	// or backend.F32; 0 holds them as the dataset does, its table itself
	// the host tier. Other than the dataset makes the host tier a converted
	// copy (featstore.NewTiered).
	FeatureDType backend.DType
	// Topology says where the graph's neighbour lists are (Run only; a
	// Tier of NewTier samples the graph its trainer is given).
	Topology TopologyMode
	// ListShare is the share of the room left once the step is
	// provisioned that lists take under host topology, in (0, 1]; 0:
	// DefaultListShare.
	ListShare float64
	// FetchAhead gathers each training step's host-tier rows a step ahead,
	// beside the step before, instead of inside the step
	// (featstore.Tiered.FetchAhead): for a small cache, whose misses cross
	// PCIe every step. With features on disk the whole gather of the disk
	// tier goes beside, its reads included (featstore.Disk.FetchAhead).
	// One-type graphs only.
	FetchAhead bool
	// Lookahead, >= 2, starts a disk tier's gathers that many steps ahead
	// (featstore.Disk.SetLookahead: the host copies a step's rows during
	// the steps in between, the replay driver landing each in the step
	// before its own; implies FetchAhead); 0 or 1: FetchAhead's one step
	// at most. Features on disk, one type.
	Lookahead int
	// HostMemory caps the host memory of features left on disk
	// (dataset.OpenOptions.FeaturesOnDisk), in bytes: the disk tier's
	// staging for the rows of a step and its tables first
	// (featstore.Disk.PlanHost), then the host tier, the rows after the
	// cache's in the ranking that fit what is left; the rest are read from
	// feat.npy when a step needs them (featstore.Disk); 0: every row. A
	// typed dataset's types share what their stagings and tables leave by
	// SplitHost. Too little for the staging and tables is a
	// HostMemoryError. A dataset whose features are in memory keeps them
	// all there.
	HostMemory int64
	// DiskReaders are the goroutines that read rows from disk at once; 0:
	// featstore's default.
	DiskReaders int
	// DiskBuffered reads the rows left on disk through the page cache
	// instead of with O_DIRECT (featstore.DiskConfig.Direct).
	DiskBuffered bool
	// StageHost has a disk tier's host function copy the host tier's rows
	// a gather needs into its staging too (featstore.DiskConfig.StageHost),
	// so the device reads them from the contiguous staging instead of
	// where they lie; the staging then holds a gather's rows outside the
	// cache, within HostMemory. Refused without features on disk.
	StageHost bool
	// Band is the host memory, in bytes, of a copy of the rows ranked
	// after the GPU cache's in rank order (featstore.Tiered.Band), which
	// the device reads faster than the same rows spread over the whole
	// table (docs/perf.md); 0: DefaultBand; < 0: none. Features in memory,
	// one type. With StageHost, the disk tier's host tier (in rank order
	// already) has its first Band bytes read in place (0:
	// DefaultStagedBand) and only the rest staged
	// (featstore.DiskConfig.InPlaceRows).
	Band int64
	// Hot are the CPU-computed hot vertices (Hot.Ratio 0: none).
	Hot    HotOptions
	Replay train.ReplayOptions
	Log    io.Writer // the plan and the figures; nil: silent

	trial *trial    // ChooseHotRatio's timing of a trial run
	ranks *rankings // rankings shared by ChooseHotRatio's trials and the run; nil: made per run
}

// Stats are what the hybrid driver placed and measured.
type Stats struct {
	Placement  Placement          `json:"placement"`
	HostRows   int64              `json:"host_rows"`      // feature rows read from host memory (training and evaluation)
	Rows       int64              `json:"rows"`           // feature rows gathered in all
	HitRate    float64            `json:"cache_hit_rate"` // 1 - HostRows/Rows
	PCIeBytes  int64              `json:"pcie_bytes"`     // HostRows × row bytes
	Launches   int                `json:"train_launches"`
	PeakBytes  int64              `json:"peak_bytes"` // backend memory at its peak (the allocator's count)
	Hot        *HotStats          `json:"hot,omitempty"`
	ReplayStat *train.ReplayStats `json:"replay"`
	// Lists are the neighbour lists sampling read (training, evaluation
	// and the envelope's observation) by tier under host topology: Local
	// from GPU memory, Host from host memory; nil with the whole graph on
	// the GPU (not counted).
	Lists *backend.ReadCounts `json:"lists,omitempty"`
	// Tiers are the rows and bytes of features left on disk by tier (the
	// GPU cache, the host tier, the file), Epochs the same per epoch; nil
	// where the whole table is in host memory.
	Tiers  *DiskTiers   `json:"tiers,omitempty"`
	Epochs []EpochTiers `json:"epochs,omitempty"`
}

// Tier is one device's tiered feature store and the hook that places its
// cache once the step is provisioned (ReplayOptions.BeforeCapture).
type Tier struct {
	Store TierStore
	Stats Stats
	opt   Options
	be    backend.Backend
	graph TopologyPlan    // where the graph is (Run's; zero for a Tier of NewTier)
	topo  *hostTopology   // the graph under host topology, else nil
	disk  *featstore.Disk // Store, where the features are on disk
	file  string          // the disk store's file
	epoch *epochs         // the disk tiers per epoch (Run's)
}

// NewTier ranks the rows and makes be's tiered store (every row in host
// memory, the cache empty until BeforeCapture). Give Store to the trainer
// (train.Options.Features, which then owns it) and BeforeCapture to its
// replay driver.
func NewTier(be backend.Backend, ds *dataset.Dataset, cfg train.Config, opt Options) (*Tier, error) {
	if ds.Typed() {
		return nil, fmt.Errorf("hybrid: %s is typed, and a device's tier of a group is one-type graphs' (the typed hybrid mode runs on one device)", ds.Name)
	}
	if ds.FeatureFile == nil && opt.HostMemory > 0 && ds.FeatureBytes() > opt.HostMemory {
		return nil, fmt.Errorf("host-memory: %s of host tier, but %s's %s of features are in memory already; open the dataset with its features on disk (--data)",
			mib(opt.HostMemory), ds.Name, mib(ds.FeatureBytes()))
	}
	order, err := opt.ranks.featureOrder(ds, cfg, opt)
	if err != nil {
		return nil, err
	}
	if ds.FeatureFile == nil && opt.StageHost {
		return nil, noStaging(ds)
	}
	if ds.FeatureFile == nil && opt.Lookahead > 1 {
		return nil, fmt.Errorf("lookahead: %d starts the disk tier's gathers steps ahead, and %s's features are in host memory (give --host-memory below their size, or drop --lookahead)", opt.Lookahead, ds.Name)
	}
	if ds.FeatureFile != nil {
		if cfg.FullEval {
			return nil, fmt.Errorf("full-eval: layer-wise inference reads the whole table in host memory, and %s's features are on disk", ds.Name)
		}
		d, err := newDiskStore(be, ds, order, opt)
		if err != nil {
			return nil, err
		}
		d.Reserve(gatherRows(ds, cfg.Batch, cfg.Fanouts)) // a node step's; Run reserves for the task's seeds
		return &Tier{Store: d, opt: opt, be: be, disk: d, file: ds.FeatureFile.Path}, nil
	}
	store, err := featstore.NewTiered(be, ds.FeatureTable(), ds.FeatDim, order, opt.FeatureDType)
	if err != nil {
		return nil, err
	}
	store.FetchAhead(opt.FetchAhead)
	return &Tier{Store: store, opt: opt, be: be}, nil
}

// BeforeCapture places the GPU's lists (under host topology) and the
// cache under the budget and fills the cache.
func (t *Tier) BeforeCapture(env train.EnvelopeReport) error {
	p, err := place(t.be, t.Store, t.topo, t.graph, env, t.opt)
	if err != nil {
		return err
	}
	if t.disk != nil {
		host, err := hostRowsWithin(t.disk, t.opt.HostMemory, int(p.CacheRows))
		if err != nil {
			return err
		}
		t.disk.SetHostRows(host)
		p.splitHost(host, t.opt.HostMemory, t.file)
		p.Host = t.disk.PlanHost(int(p.CacheRows), host)
	}
	tiered, _ := t.Store.(*featstore.Tiered) // the store a band serves (features in memory)
	if tiered != nil && backend.MapsHost(t.be) {
		p.BandRows = min(bandRows(t.opt.Band, DefaultBand, p.RowBytes), p.HostRows)
	}
	t.Stats.Placement = p
	if t.opt.Log != nil {
		p.Print(t.opt.Log)
	}
	if err := t.Store.Fill(int(p.CacheRows)); err != nil {
		return err
	}
	if tiered != nil {
		if err := tiered.Band(int(p.BandRows)); err != nil {
			return err
		}
		t.Stats.Placement.BandRows = int64(tiered.BandRows())
	}
	if t.disk == nil {
		return nil
	}
	t.Stats.Placement.Host = t.disk.HostUse()
	return checkHostUse(t.Stats.Placement.Host, t.opt.HostMemory)
}

// Finish reads the store's counters into Stats (call before the trainer,
// which owns the store, is closed).
func (t *Tier) Finish() error {
	st := &t.Stats
	st.HostRows, st.Rows, st.PCIeBytes = 0, 0, 0 // the counters as they are now, not added twice
	if err := st.addStore(t.Store); err != nil {
		return err
	}
	if t.disk != nil {
		tiers, err := diskTiers(t.disk)
		if err != nil {
			return err
		}
		st.Tiers = &tiers
		if t.epoch != nil {
			if err := t.epoch.mark(t.epoch.epoch + 1); err != nil {
				return err
			}
			st.Epochs = t.epoch.out
		}
	}
	st.settle(t.be)
	if t.topo != nil {
		r, err := t.topo.reads()
		if err != nil {
			return err
		}
		st.Lists = &r
	}
	return nil
}

// addStore adds a tiered store's counters (rows read from host memory and
// in all, and the host rows' bytes) to st.
func (st *Stats) addStore(s TierStore) error {
	host, rows, err := s.Stats()
	if err != nil {
		return err
	}
	st.HostRows += host
	st.Rows += rows
	st.PCIeBytes += host * int64(s.Dim()) * int64(s.DType().Size())
	return nil
}

// settle derives the hit rate from the counters added and reads be's peak.
func (st *Stats) settle(be backend.Backend) {
	if st.Rows > 0 {
		st.HitRate = 1 - float64(st.HostRows)/float64(st.Rows)
	}
	st.PeakBytes = backend.MemoryOf(be).PeakBytes()
}

// Run trains cfg on ds with the replay driver over a tiered feature store
// placed under opt.Budget, and returns the summary and the figures. topt
// are the trainer's options (RunDir, Progress...); Features and Replay are
// set here. A typed dataset gets a tiered store per type with features
// (train.Options.TypedFeatures), ranked by DegreeRanking, their caches
// sharing the budget by SplitCache (typed.go); its hot vertices, host
// topology and rows fetched ahead are refused.
func Run(ctx context.Context, be backend.Backend, ds *dataset.Dataset, cfg train.Config, topt train.Options, opt Options) (*train.Summary, *Stats, error) {
	if ds.Typed() {
		return runTyped(ctx, be, ds, cfg, topt, opt)
	}
	tier, err := newRunTier(be, ds, cfg, opt)
	if err != nil {
		return nil, nil, err
	}
	defer tier.freeTopology() // after the trainer, which samples it
	topt.Features, topt.Mode = tier.Store, train.Hybrid
	if tier.topo != nil {
		topt.Graph = tier.topo.graph
	}
	tr, err := train.New(be, ds, cfg, topt)
	if err != nil {
		tier.Store.Free()
		return nil, nil, err
	}
	defer tr.Close()
	if tier.disk != nil {
		tier.disk.Reserve(gatherRows(ds, tr.Head().SeedCap(cfg.Batch), cfg.Fanouts))
	}
	ropt := opt.Replay
	ropt.BeforeCapture = tier.BeforeCapture
	if tier.disk != nil {
		tier.epoch = &epochs{read: func() (DiskTiers, error) { return diskTiers(tier.disk) }}
		tier.epoch.chain(&ropt)
	}
	var hd *hot.Driver
	if opt.Hot.Ratio > 0 {
		ranked, err := opt.ranks.hotOrder(ds, cfg, opt)
		if err != nil {
			return nil, nil, err
		}
		if hd, err = hot.New(tr, be, ds, cfg, opt.Hot, ranked); err != nil {
			return nil, nil, err
		}
		defer hd.Close()
		if opt.Log != nil {
			rows := "aggregated inputs of layer 0, multiplied on the device by the weights of the moment"
			if !hd.Inputs() {
				rows = fmt.Sprintf("outputs of layer 0, with the weights of %d super-batches before", opt.Hot.Staleness)
				if !opt.Hot.Outputs {
					rows += fmt.Sprintf(" (a %s bottom layer cannot take aggregated inputs)", cfg.Model)
				}
			}
			fmt.Fprintf(opt.Log, "hot vertices: %d (%.1f%%), rows computed on the CPU every %d steps, %d super-batches ahead: %s (%.1f MiB of host rows)\n",
				hd.Vertices(), 100*float64(hd.Vertices())/float64(ds.Graph.NumNodes), opt.Hot.SuperBatch, opt.Hot.Staleness, rows, float64(hd.Stats().TableBytes)/(1<<20))
		}
		ropt.Segment, ropt.BeforeRun = opt.Hot.SuperBatch, hd.BeforeRun
	}
	if t := opt.trial; t != nil {
		ropt.Segment = opt.Hot.SuperBatch
		inner := ropt.BeforeRun
		ropt.BeforeRun = func(epoch, step int) error {
			if err := t.mark(epoch, step); err != nil || inner == nil {
				return err
			}
			return inner(epoch, step)
		}
	}
	sum, rst, err := tr.RunReplay(ctx, ropt)
	if err != nil {
		return nil, nil, err
	}
	if hd != nil {
		hd.Close() // waits for the CPU's last tasks
		hs := hd.Stats()
		tier.Stats.Hot = &hs
	}
	if err := tier.Finish(); err != nil {
		return nil, nil, err
	}
	tier.Stats.ReplayStat = rst
	tier.Stats.Launches = rst.Launches
	return sum, &tier.Stats, nil
}

// rankings holds the orders a run computes before it trains (the feature
// rows by expected reads, the hot vertices by expected use as bottom-layer
// destinations), which depend on the data and the configuration only:
// ChooseHotRatio's trials and the run after them share one set instead of
// computing them again. A nil *rankings computes each when asked and keeps
// nothing.
type rankings struct {
	order []int32 // the feature rows, most gathered first
	dests []int32 // the vertices a batch can have as bottom-layer destinations, the likeliest first
}

// hotOrder ranks the vertices by the chance that a training batch has them
// among its bottom layer's destinations (RankReached over the top L-1
// hops), leaving out those no batch can reach: the hot vertices are its
// first ratio·N.
func (r *rankings) hotOrder(ds *dataset.Dataset, cfg train.Config, opt Options) ([]int32, error) {
	if r != nil && r.dests != nil {
		return r.dests, nil
	}
	L := len(cfg.Fanouts)
	ids, err := RankReached(ds.Graph, ds.Symmetric, ds.Train, cfg.Batch, cfg.Fanouts[:L-1], opt.Threads)
	if err != nil {
		return nil, fmt.Errorf("hot vertices: ranking: %w", err)
	}
	if r != nil {
		r.dests = ids
	}
	return ids, nil
}

// featureOrder orders the vertices by how often a training step is
// expected to gather their rows (RankByAccess).
func (r *rankings) featureOrder(ds *dataset.Dataset, cfg train.Config, opt Options) ([]int32, error) {
	if r != nil && r.order != nil {
		return r.order, nil
	}
	if cfg.TaskName() == train.TaskLink {
		// A link step's ends are drawn from the training edges, so a vertex
		// is an end, and a sampled neighbour, in proportion to its degree
		// (uniform negatives aside): the cache takes the highest degrees.
		return graph.DegreeOrder(ds.Graph), nil
	}
	order, err := RankByAccess(ds.Graph, ds.Symmetric, ds.Train, cfg.Batch, cfg.Fanouts, opt.Threads)
	if err != nil {
		return nil, fmt.Errorf("hybrid: ranking the feature rows: %w", err)
	}
	if r != nil {
		r.order = order
	}
	return order, nil
}

// place sizes the GPU's lists (under host topology, topo non-nil) and the
// cache from what is resident once the step is provisioned: the lists
// take their share (Options.ListShare) of the room the budget leaves, the
// cache what remains.
func place(be backend.Backend, store TierStore, topo *hostTopology, graph TopologyPlan, env train.EnvelopeReport, opt Options) (Placement, error) {
	rowBytes := int64(store.Dim()) * int64(store.DType().Size())
	resident := backend.MemoryOf(be).InUseBytes()
	if topo != nil {
		room := graph.ListBytes()
		if opt.Budget > 0 {
			room = listRoom(opt.Budget-resident-opt.margin(), opt.ListShare, graph.ListBytes())
		}
		var err error
		if graph.GPULists, graph.GPUEdges, err = topo.place(room); err != nil {
			return Placement{}, err
		}
		resident += graph.GPUListBytes()
	}
	p, err := opt.PlaceCache(resident, env.Bytes, rowBytes, store.Rows())
	p.Topology = graph
	return p, err
}

// margin is the options' margin: Margin, or DefaultMargin's of a budget;
// none without a budget.
func (opt Options) margin() int64 {
	switch {
	case opt.Budget <= 0:
		return 0
	case opt.Margin > 0:
		return opt.Margin
	}
	return DefaultMargin(opt.Budget)
}

// PlaceCache is Place under the options' budget and margin: without a
// budget every row fits (no margin), and a margin of 0 is DefaultMargin's;
// CacheRows, when set, is the rows asked for.
func (opt Options) PlaceCache(resident, envelope, rowBytes, rows int64) (Placement, error) {
	budget := opt.Budget
	if budget <= 0 {
		budget = resident + rows*rowBytes
	}
	return Place(budget, resident, envelope, opt.margin(), rowBytes, rows, opt.CacheRows)
}

// newRunTier is NewTier with the graph placed as opt.Topology and the
// budget say (PlanTopology, the step estimated by StepEstimate): under
// host topology the tier holds the graph (every list in host memory until
// BeforeCapture), which the caller gives the trainer and frees after it
// (freeTopology).
func newRunTier(be backend.Backend, ds *dataset.Dataset, cfg train.Config, opt Options) (*Tier, error) {
	g := ds.Graph
	step := StepEstimate(g, cfg.Batch, cfg.Fanouts, ds.FeatDim)
	plan, err := PlanTopology(opt.Topology, opt.Budget, opt.margin(), step, g.NumNodes, g.NumEdges())
	if err != nil {
		return nil, err
	}
	tier, err := NewTier(be, ds, cfg, opt)
	if err != nil {
		return nil, err
	}
	tier.graph = plan
	if plan.Host {
		if tier.topo, err = newHostTopology(be, g); err != nil {
			tier.Store.Free()
			return nil, err
		}
	}
	return tier, nil
}

// freeTopology releases the graph under host topology.
func (t *Tier) freeTopology() {
	if t.topo != nil {
		t.topo.free()
		t.topo = nil
	}
}
