package rmat

import "github.com/fanout-gnn/fanout/dataset/planted"

// IGB-H's vertex types in the order igbhTypes lists them (paper, the
// target, first).
const (
	igbhPaper = iota
	igbhAuthor
	igbhInstitute
	igbhFos
	igbhJournal
	igbhConference
)

// igbhFeatDim is the width of every IGB-H type's features (its
// Sentence-BERT embeddings are 1024 wide).
const igbhFeatDim = 1024

// igbhSignal is the centroids' distance of every type's features, in units
// of the noise: a paper's own features show its class far less well than
// its neighbourhood does (TestIGBHSimShape's proxy).
const igbhSignal = 2

// igbhTypes are IGB-H medium's vertex types with their counts, every one
// with 1024 features. Paper, author, institute and fos are the counts that
// DGL's GraphBolt loader of IGB-H asserts on the downloaded arrays
// (github.com/dmlc/dgl, examples/graphbolt/rgcn/download.py, num_nodes
// "medium"; MLPerf Training's reference, github.com/mlcommons/training,
// graph_neural_network/dataset.py (since retired_benchmarks/rgat/), holds
// the same paper and author counts). Journal and conference are those of
// MLPerf Inference's IGB-H loader (github.com/mlcommons/inference,
// graph/R-GAT/dgl_utilities/feature_fetching.py, num_nodes "medium").
func igbhTypes() []planted.Type {
	t := func(name string, count int64) planted.Type {
		return planted.Type{Name: name, Count: count, FeatDim: igbhFeatDim, Signal: igbhSignal}
	}
	return []planted.Type{
		t("paper", 10_000_000), t("author", 15_544_654), t("institute", 23_256),
		t("fos", 415_054), t("journal", 37_565), t("conference", 4_189),
	}
}

// IGB-H medium's edges of published and venue. IGB publishes no count of
// these two relations (not even for the full graph: its 5,812,005,639
// edges are the other four relations' sum), so the preset assumes one
// venue at most per paper: half the papers in a journal, a tenth at a
// conference.
const (
	igbhPublished = 5_000_000
	igbhVenue     = 1_000_000
)

// igbhRelations are IGB-H's relations, named and directed as its files
// name them (paper__written_by__author: from the paper to its author),
// with IGB-H medium's edge counts from the GraphBolt loader named at
// igbhTypes (num_edges "medium"), and published and venue as assumed
// above. Generation adds the reverses (rev_written_by, ...) and makes
// cites undirected, as MLPerf's reference does.
func igbhRelations() []planted.Relation {
	return []planted.Relation{
		{Name: "cites", Src: igbhPaper, Dst: igbhPaper, Edges: 120_077_694},
		{Name: "written_by", Src: igbhPaper, Dst: igbhAuthor, Edges: 39_854_592},
		{Name: "affiliated_to", Src: igbhAuthor, Dst: igbhInstitute, Edges: 11_049_412},
		{Name: "topic", Src: igbhPaper, Dst: igbhFos, Edges: 68_510_495},
		{Name: "published", Src: igbhPaper, Dst: igbhJournal, Edges: igbhPublished},
		{Name: "venue", Src: igbhPaper, Dst: igbhConference, Edges: igbhVenue},
	}
}

// igbhScale is igbh-sim's default share of IGB-H medium: its 26,024,718
// vertices' 1024 float32 features fill about 107 GB, more than a GPU
// host of 128 GiB memory and 64 GiB disk holds comfortably; a tenth is
// about 11 GB on disk (EstimatedBytes).
const igbhScale = 0.1

// igbhSim is IGB-H medium's shape, scaled by igbhScale (every type's
// count, every relation's edges and the split: the types' shares and
// each type's degrees stay), with MLPerf Training's RGAT settings as its
// model: 3 layers, hidden 512, 4 heads, fanouts 15,10,5, batch 1024, Adam
// at 0.001, dropout 0.2 (train_rgnn_multi_gpu.py's defaults in the
// reference named at igbhTypes). The split is the reference's: 60% of
// the papers to train, 0.5% to validate (split_seeds.py); the test set is
// IGB's own 20%. 19 classes, IGB's coarse labels; Variant.Classes = 2983
// gives the count of its fine ones, which the reference trains.
func igbhSim() Preset {
	return Preset{
		Name: "igbh-sim",
		Schema: &planted.Schema{
			Types: igbhTypes(), Relations: igbhRelations(),
			Target: igbhPaper, Classes: 19, Affinity: affinity, Skew: skew,
			Train: 6_000_000, Valid: 50_000, Test: 2_000_000,
		},
		Factor: igbhScale, Source: "IGB-H medium",
		Model: "rgat", Layers: 3, Hidden: 512, Heads: 4, Fanouts: []int{15, 10, 5}, Batch: 1024, Dropout: 0.2, LR: 0.001,
	}
}
