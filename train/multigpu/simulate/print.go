package simulate

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/fanout-gnn/fanout/train"
)

// PrintSteps prints the job, its steps (summed over the ranks) and
// its ranks (averaged over the steps), or every rank of every step.
func PrintSteps(w io.Writer, res *Result, perRank bool) {
	c := res.Config
	n := c.Ranks()
	fmt.Fprintf(w, "%s: %d vertices, %d edges, %d features; %d host(s) x %d devices, global batch %d (%d per device), fanouts %s, seed %d\n",
		res.Dataset, res.Vertices, res.Edges, res.FeatDim, c.Hosts, c.Devices, c.Batch, c.Batch/n, train.FormatFanouts(c.Fanouts), c.Seed)
	fmt.Fprintf(w, "topology: %s; features: %s (reuse %v); %d steps of %d in an epoch\n",
		topologyNote(res), c.Features, c.Reuse, len(res.Steps), res.EpochSteps)
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\trank\tseeds\tedges\tlists local\treplica\tpeer\tpeer KiB\trows local\treplica\tsame host\tother hosts\treused\tKiB same host\tother hosts\tchunk\tfill\timbalance\t")
	var mean []RankStep
	for _, st := range res.Steps {
		var sum RankStep
		for r, rs := range st.Ranks {
			sum = sum.Add(rs)
			if perRank {
				rankLine(tw, fmt.Sprint(st.Step), fmt.Sprint(r), rs, res, 0, "", "")
			}
		}
		mean = append(mean, st.Ranks...)
		fill := ""
		if c.Features.Exchanged() && st.Chunk > 0 && n > 1 {
			fill = fmt.Sprintf("%.2f", float64(sum.Rows.SameHost+sum.Rows.OtherHost)/float64(st.Chunk*st.Gathers*n*(n-1)))
		}
		rankLine(tw, fmt.Sprint(st.Step), "all", sum, res, st.Chunk, fill, fmt.Sprintf("%.3f", st.Imbalance))
	}
	tw.Flush()
	fmt.Fprintln(w, "per rank, mean over the steps:")
	tw = tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\trank\tseeds\tedges\tlists local\treplica\tpeer\tpeer KiB\trows local\treplica\tsame host\tother hosts\treused\tKiB same host\tother hosts\t\t\t\t")
	for r := range n {
		var sum RankStep
		for k := range res.Steps {
			sum = sum.Add(mean[k*n+r])
		}
		rankLine(tw, "", fmt.Sprint(r), sum.Div(len(res.Steps)), res, 0, "", "")
	}
	tw.Flush()
}

// topologyNote describes the lists' placement.
func topologyNote(res *Result) string {
	c := res.Config
	switch {
	case c.Replicate < 0 || c.TopoRanks < 2:
		return "the whole graph on every device"
	}
	return fmt.Sprintf("partitioned over %d devices, the lists of %d highest-degree vertices (%.1f MiB) on every device",
		c.TopoRanks, res.Replicated, float64(min(c.Replicate, 4*res.Edges))/(1<<20))
}

// rankLine prints one row of figures: lists and rows by where they were
// read, and the bytes of rows moved (read from peers in place, or asked
// with all-to-alls: an id and a row each).
func rankLine(w io.Writer, step, rank string, rs RankStep, res *Result, chunk int, fill, imb string) {
	rowBytes := 4 * float64(res.FeatDim)
	if res.Config.Features.Exchanged() {
		rowBytes += 4
	}
	ch := ""
	if chunk > 0 {
		ch = fmt.Sprint(chunk)
	}
	fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.1f\t%d\t%d\t%d\t%d\t%d\t%.1f\t%.1f\t%s\t%s\t%s\t\n", step, rank, rs.Seeds, rs.Edges,
		rs.Lists.Local, rs.Lists.Replica, rs.Lists.Remote, float64(rs.Lists.RemoteBytes)/1024,
		rs.Rows.Local, rs.Rows.Replica, rs.Rows.SameHost, rs.Rows.OtherHost, rs.Rows.Reused,
		float64(rs.Rows.SameHost)*rowBytes/1024, float64(rs.Rows.OtherHost)*rowBytes/1024, ch, fill, imb)
}

// PrintPredictions prints the model's epoch at every size of the ladder.
func PrintPredictions(w io.Writer, res *Result, m *Model, job Prediction, preds []Prediction, global bool) {
	l := m.Links
	batch := "per-device batch kept"
	if global {
		batch = fmt.Sprintf("global batch %d kept", res.Config.Batch)
	}
	fmt.Fprintf(w, "predicted epochs (%s; one GPU's step %.3f ms at %d seeds; links: intra-host %.0f GB/s%s, network %.0f GB/s per GPU; %d collectives a step at %.0f µs (%.0f µs across hosts); %.2f MB of gradients):\n",
		batch, m.Step.At(float64(res.Config.Batch/res.Config.Ranks())), res.Config.Batch/res.Config.Ranks(), map[bool]float64{false: l.NVLinkGBs, true: l.PCIeGBs}[l.IntraPCIe],
		map[bool]string{false: " NVLink", true: " PCIe"}[l.IntraPCIe], l.NetGBs, l.Collectives, l.CollectiveUs, l.NetCollectiveUs, float64(m.ParamBytes)/1e6)
	printPredictionTable(w, job, preds)
}

// printPredictionTable prints a job's prediction and the ladder's, a line
// each.
func printPredictionTable(w io.Writer, job Prediction, preds []Prediction) {
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "devices\tbatch/dev\tsteps\tcompute ms\timbalance\tNVLink\tnetwork\tall-reduce\tstep ms\tepoch s\tspeed-up\tbound\tnext\t")
	for i, p := range append([]Prediction{job}, preds...) {
		scale := Scale{Hosts: p.Hosts, Devices: p.Devices}.String()
		if i == 0 {
			scale = "this job: " + scale
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.4f\t%.2fx\t%s\t%s\t\n", scale,
			p.PerDevice, p.Steps, p.Compute, p.Imbalance, p.NVLink, p.Network, p.AllReduce, p.StepMs, p.EpochS, p.Speedup, p.Bound, p.Overhead)
	}
	tw.Flush()
}
