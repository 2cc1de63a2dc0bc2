package train

import (
	"encoding/json"
	"fmt"
)

// Link prediction's decoders, negative distributions, sharing and
// exclusions (LinkConfig).
const (
	DecoderDot     = "dot" // score = <e_u, e_v>
	DecoderMLP     = "mlp" // score = MLP(e_u ⊙ e_v): Linear, ReLU, Linear
	DistUniform    = "uniform"
	DistDegree     = "degree"
	DistInBatch    = "in-batch" // the other positives' destinations in the step
	ShareNone      = "none"     // each positive draws its own negatives
	ShareBatch     = "batch"    // the step draws one set, every positive's
	ExcludeNone    = "none"     // DGL's default: the batch's edges stay in its neighbourhoods
	ExcludeSelf    = "self"     // the batch's edges leave them
	ExcludeReverse = "reverse"  // the batch's edges and their reverses leave them
)

// LinkConfig is link prediction's part of a Config (Task TaskLink): a step
// takes Config.Batch positive training edges, draws Negatives negatives for
// each, embeds every end with the model (whose output width is Embed) and
// scores the pairs with the decoder.
type LinkConfig struct {
	Embed        int    `json:"embed,omitempty"` // embedding width, the model's output; 0: Config.Hidden
	Negatives    int    `json:"negatives"`       // negatives per positive edge
	NegativeDist string `json:"negative_dist"`   // DistUniform, DistDegree or DistInBatch
	// NegativeSharing is ShareNone (every positive draws Negatives of its
	// own) or ShareBatch (a step draws Negatives distinct vertices once,
	// and every positive of the step is scored against all of them, as
	// recommendation trainers share negatives).
	NegativeSharing string `json:"negative_sharing,omitempty"`
	Decoder         string `json:"decoder"`                 // DecoderDot or DecoderMLP
	DecoderWidth    int    `json:"decoder_width,omitempty"` // the MLP decoder's hidden width; 0: Embed
	Exclude         string `json:"exclude"`                 // ExcludeReverse, ExcludeSelf or ExcludeNone
	// EvalNegatives, when above 0, ranks every held-out edge (u, v)
	// against that many negatives (u, w) drawn at evaluation time instead
	// of the dataset's stored ones: ogbl-citation2's protocol of 1,000
	// random destinations per positive, at a scale where storing them
	// would not fit.
	EvalNegatives int `json:"eval_negatives,omitempty"`
	// EvalEdges, when above 0, scores only the first EvalEdges edges of
	// each held-out set (the split shuffled them, so they are a uniform
	// sample); 0 scores all.
	EvalEdges int `json:"eval_edges,omitempty"`
}

// LinkDefaults are link prediction's defaults: one uniform negative per
// positive, the dot decoder, and the batch's edges and their reverses
// taken out of its neighbourhoods.
func LinkDefaults() LinkConfig {
	return LinkConfig{Negatives: 1, NegativeDist: DistUniform, NegativeSharing: ShareNone, Decoder: DecoderDot, Exclude: ExcludeReverse}
}

// UseLinkDefaults makes c start from a link task's defaults: LinkDefaults,
// GCN and the cosine schedule. The dot decoder ranks a vertex's candidates
// much by their degree (deg(u)·deg(v) alone beats GraphSAGE on R-MAT's and
// planted communities' link tasks); GCN's symmetric normalisation keeps
// sqrt(degree) in an embedding's norm, where GraphSAGE's mean discards it
// (docs/perf.md, link prediction). The schedule lets a run that learns in
// its first epoch settle instead of wandering.
func (c *Config) UseLinkDefaults() {
	c.Link = LinkDefaults()
	c.Model = "gcn"
	c.LRSchedule = ScheduleCosine
}

// UnmarshalJSON decodes link settings, reading a configuration saved
// before negative_sharing as ShareNone, the only way it drew.
func (l *LinkConfig) UnmarshalJSON(b []byte) error {
	type plain LinkConfig // without this method
	p := plain{NegativeSharing: ShareNone}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*l = LinkConfig(p)
	return nil
}

// NegativesText describes a step's negatives: "1 uniform negative per
// edge", "100 degree negatives shared by the step", "15 in-batch
// negatives per edge".
func (l LinkConfig) NegativesText() string {
	s := "s"
	if l.Negatives == 1 {
		s = ""
	}
	if l.NegativeSharing == ShareBatch {
		return fmt.Sprintf("%d %s negative%s shared by the step", l.Negatives, l.NegativeDist, s)
	}
	return fmt.Sprintf("%d %s negative%s per edge", l.Negatives, l.NegativeDist, s)
}

// MaxNegatives bounds the negatives drawn per positive edge at a step.
const MaxNegatives = 1000

// check checks link prediction's settings, in-batch negatives against a
// step's batch of positive edges.
func (l LinkConfig) check(batch int) error {
	switch {
	case l.Embed < 0:
		return bad("link.embed", "%d, want >= 0 (0: the hidden width)", l.Embed)
	case l.Negatives < 1 || l.Negatives > MaxNegatives:
		return bad("link.negatives", "%d, want 1 to %d", l.Negatives, MaxNegatives)
	case l.NegativeDist != DistUniform && l.NegativeDist != DistDegree && l.NegativeDist != DistInBatch:
		return bad("link.negative_dist", "%s, want uniform, degree or in-batch", q(l.NegativeDist))
	case l.NegativeSharing != ShareNone && l.NegativeSharing != ShareBatch:
		return bad("link.negative_sharing", "%s, want none or batch", q(l.NegativeSharing))
	case l.NegativeDist == DistInBatch && l.NegativeSharing == ShareBatch:
		return bad("link.negative_sharing", "batch, but in-batch negatives are the step's own destinations, shared already; give none, or a negative_dist to draw from")
	case l.NegativeDist == DistInBatch && l.Negatives > batch-1:
		return bad("link.negatives", "%d in-batch negatives, but a step of %d edges has %d other destinations; give at most %d, or a larger batch", l.Negatives, batch, batch-1, max(batch-1, 0))
	case l.Decoder != DecoderDot && l.Decoder != DecoderMLP:
		return bad("link.decoder", "%s, want dot or mlp", q(l.Decoder))
	case l.DecoderWidth < 0:
		return bad("link.decoder_width", "%d, want >= 0 (0: the embedding width)", l.DecoderWidth)
	case l.DecoderWidth > 0 && l.Decoder != DecoderMLP:
		return bad("link.decoder_width", "%d, but only the mlp decoder has a hidden width (decoder %s)", l.DecoderWidth, l.Decoder)
	case l.Exclude != ExcludeReverse && l.Exclude != ExcludeSelf && l.Exclude != ExcludeNone:
		return bad("link.exclude", "%s, want reverse, self or none", q(l.Exclude))
	case l.EvalNegatives < 0:
		return bad("link.eval_negatives", "%d, want >= 0 (0: the dataset's stored negatives)", l.EvalNegatives)
	case l.EvalEdges < 0:
		return bad("link.eval_edges", "%d, want >= 0 (0: every held-out edge)", l.EvalEdges)
	}
	return nil
}

// EmbedWidth is the embedding width of a link run of hidden width hidden.
func (l LinkConfig) EmbedWidth(hidden int) int {
	if l.Embed > 0 {
		return l.Embed
	}
	return hidden
}

// MLPWidth is the MLP decoder's hidden width for embeddings of width embed.
func (l LinkConfig) MLPWidth(embed int) int {
	if l.DecoderWidth > 0 {
		return l.DecoderWidth
	}
	return embed
}
