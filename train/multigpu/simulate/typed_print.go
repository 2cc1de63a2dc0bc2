package simulate

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// PrintTypedSteps prints a typed job, its types and relations, its steps
// (the ranks' mean and the largest rank's figures, each figure its
// largest) and its ranks (averaged over the steps), or every rank of every
// step, with the sampled edges per relation and the
// input rows per type (every layer's and hop's summed), and a device's
// memory.
func PrintTypedSteps(w io.Writer, res *TypedResult, mem Memory, perRank bool) {
	c := res.Config
	n := c.Ranks()
	fmt.Fprintf(w, "%s: %d vertex types, %d relations, %d training seeds of %s; %d host(s) x %d devices, global batch %d (%d per device), fanouts %s, seed %d\n",
		res.Dataset, len(res.Types), len(res.Relations), res.TrainSeeds, res.Types[res.Target].Name, c.Hosts, c.Devices, c.Batch, c.Batch/max(n, 1), typedFanouts(res), c.Seed)
	fmt.Fprintf(w, "topology and features: every relation and feature table on every device (typed graphs are not placed); %d steps of %d in an epoch\n", len(res.Steps), res.EpochSteps)
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "type\tvertices\twidth\trow bytes\ttable MiB\t")
	for _, ty := range res.Types {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f\t\n", ty.Name, ty.Vertices, ty.FeatDim, ty.RowBytes, float64(ty.Vertices*int64(ty.RowBytes))/(1<<20))
	}
	tw.Flush()
	head := "step\trank\tseeds\tedges\t"
	for _, rel := range res.Relations {
		head += rel.Name + "\t"
	}
	head += "rows\t"
	for _, ty := range res.Types {
		head += ty.Name + "\t"
	}
	head += "rows MiB\timbalance\t"
	tw = tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, head)
	sums := make([]TypedRankStep, n)
	for _, st := range res.Steps {
		var all, most TypedRankStep
		for r, rs := range st.Ranks {
			all, most, sums[r] = all.Add(rs), most.Max(rs), sums[r].Add(rs)
			if perRank {
				typedLine(tw, fmt.Sprint(st.Step), fmt.Sprint(r), rs, "")
			}
		}
		typedLine(tw, fmt.Sprint(st.Step), "mean", all.Div(n), "")
		typedLine(tw, fmt.Sprint(st.Step), "largest", most, fmt.Sprintf("%.3f", st.Imbalance))
	}
	tw.Flush()
	fmt.Fprintln(w, "per rank, mean over the steps:")
	tw = tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Replace(head, "step", "", 1))
	for r, s := range sums {
		typedLine(tw, "", fmt.Sprint(r), s.Div(len(res.Steps)), "")
	}
	tw.Flush()
	fits := "fits"
	if !mem.Fits {
		fits = "does NOT fit: training would run out of memory (typed graphs hold every table on every device)"
	}
	fmt.Fprintf(w, "memory per device: features %s, lists %s, model %s, step %s (at least): %s of --gpu-memory %s: %s\n",
		mibs(mem.Features), mibs(mem.Lists), mibs(mem.Model), mibs(mem.Step), mibs(mem.Total), mibs(mem.Budget), fits)
}

// typedLine prints one row of a typed step's figures: per relation the
// edges of every layer, per type the input rows.
func typedLine(w io.Writer, step, rank string, rs TypedRankStep, imb string) {
	fmt.Fprintf(w, "%s\t%s\t%d\t%d\t", step, rank, rs.Seeds, rs.Edges)
	for _, e := range rs.RelEdges() {
		fmt.Fprintf(w, "%d\t", e)
	}
	var rows int64
	for _, v := range rs.Layers[0].Src {
		rows += v
	}
	fmt.Fprintf(w, "%d\t", rows)
	for _, v := range rs.Layers[0].Src {
		fmt.Fprintf(w, "%d\t", v)
	}
	fmt.Fprintf(w, "%.2f\t%s\t\n", float64(rs.RowBytes)/(1<<20), imb)
}

// typedFanouts says the fanouts per hop, and the relations whose own
// differ from the first relation's.
func typedFanouts(res *TypedResult) string {
	per := func(r int) string {
		var s []string
		for _, f := range res.Config.Fanouts {
			s = append(s, fmt.Sprint(f[r]))
		}
		return strings.Join(s, ",")
	}
	out := per(0)
	for r := 1; r < len(res.Relations); r++ {
		if p := per(r); p != out {
			out += fmt.Sprintf(" (%s %s)", res.Relations[r].Name, p)
		}
	}
	return out
}

// mibs is a size in MiB, or GiB from 10 GiB.
func mibs(b int64) string {
	if b >= 10<<30 {
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

// PrintTypedPredictions prints the typed model's epoch at every size of
// the ladder.
func PrintTypedPredictions(w io.Writer, res *TypedResult, m *TypedModel, job Prediction, preds []Prediction, global bool) {
	l := m.Links
	batch := "per-device batch kept"
	if global {
		batch = fmt.Sprintf("global batch %d kept", res.Config.Batch)
	}
	intra := map[bool]string{false: fmt.Sprintf("%.0f GB/s NVLink", l.NVLinkGBs), true: fmt.Sprintf("%.0f GB/s PCIe", l.PCIeGBs)}[l.IntraPCIe]
	fmt.Fprintf(w, "predicted epochs (%s; one GPU's step %.3f ms at %d seeds, %.0f sampled edges, scaled by each job's sampled edges; links: intra-host %s, network %.0f GB/s per GPU; %d collectives a step at %.0f µs (%.0f µs across hosts); %.2f MB of gradients):\n",
		batch, m.StepMs, m.RefBatch, m.RefEdges, intra, l.NetGBs, l.Collectives, l.CollectiveUs, l.NetCollectiveUs, float64(m.ParamBytes)/1e6)
	printPredictionTable(w, job, preds)
}
