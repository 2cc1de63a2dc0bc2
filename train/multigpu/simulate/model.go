package simulate

import (
	"fmt"
	"math"
)

// Links are the model's link bandwidths (GB/s = 1e9 bytes a second, one
// direction, per GPU) and collective latencies; the defaults are H100/H200
// SXM's.
type Links struct {
	NVLinkGBs float64 `json:"nvlink_gbs"` // GPUs of one host (NVLink 4: 450 GB/s per direction)
	PCIeGBs   float64 `json:"pcie_gbs"`   // PCIe 5 x16, used between GPUs of a host with IntraPCIe
	NetGBs    float64 `json:"net_gbs"`    // between hosts, per GPU (400 Gb/s InfiniBand: 50 GB/s)
	IntraPCIe bool    `json:"intra_pcie"` // a host's GPUs talk over PCIe, not NVLink
	// CollectiveUs is the fixed cost of one collective within a host (µs;
	// measured on two H100s: about 10 µs per NCCL call), NetCollectiveUs
	// across hosts (an assumption: a few network round trips).
	CollectiveUs    float64 `json:"collective_us"`
	NetCollectiveUs float64 `json:"net_collective_us"`
	// Collectives is how many collectives a step issues besides the
	// features' all-to-alls: the overflow flag's and the gradients'.
	Collectives int `json:"collectives"`
	// Overlap is the share of a step's compute that the next step's
	// all-to-all fetch of exchanged rows can hide behind (it runs beside
	// the backward pass).
	Overlap float64 `json:"overlap"`
}

// DefaultLinks are H100/H200 SXM's links.
func DefaultLinks() Links {
	return Links{NVLinkGBs: 450, PCIeGBs: 55, NetGBs: 50, CollectiveUs: 10, NetCollectiveUs: 25, Collectives: 2, Overlap: 0.5}
}

// Check refuses links that would make a prediction meaningless or not
// finite: a bandwidth that is not a finite value above 0, a latency or a
// count of collectives below 0 or not finite, an overlap outside [0, 1].
// The errors name the fields by fanout simulate's flags (NetGBs as
// --net-gbps, in Gb/s).
func (l Links) Check() error {
	for _, c := range []struct {
		flag     string
		v        float64
		positive bool
	}{
		{"nvlink-gbs", l.NVLinkGBs, true}, {"pcie-gbs", l.PCIeGBs, true}, {"net-gbps", 8 * l.NetGBs, true},
		{"collective-us", l.CollectiveUs, false}, {"net-collective-us", l.NetCollectiveUs, false},
		{"collectives", float64(l.Collectives), false},
	} {
		want := "a finite value of at least 0"
		if c.positive {
			want = "a finite bandwidth above 0"
		}
		if math.IsNaN(c.v) || math.IsInf(c.v, 0) || c.v < 0 || (c.positive && c.v == 0) {
			return fmt.Errorf("%s: %v, want %s", c.flag, c.v, want)
		}
	}
	if !(l.Overlap >= 0 && l.Overlap <= 1) {
		return fmt.Errorf("overlap: %v, want a share of the step in [0, 1]", l.Overlap)
	}
	return nil
}

// intra is the bandwidth between GPUs of one host (GB/s).
func (l Links) intra() float64 {
	if l.IntraPCIe {
		return l.PCIeGBs
	}
	return l.NVLinkGBs
}

// Figures are a simulation's per-step averages over its full steps (every
// rank with its whole share of seeds), the inputs of the model.
type Figures struct {
	Hosts, Devices int
	PerDevice      int     // seeds per rank per step
	TrainSeeds     int     // seeds of an epoch
	Imbalance      float64 // slowest rank's sampled edges over the mean, averaged over steps
	// Per step, of the rank that moves most: bytes read in place from
	// peers of the same host (neighbour lists and feature rows), and the
	// bytes the features' all-to-alls put on the wire within the host and
	// to other hosts (every chunk whole, its ids asked and its rows sent).
	PeerBytes, WireHostBytes, WireNetBytes float64
	Exchanged                              bool // rows move by all-to-alls (two per step)
}

// FiguresOf averages res's full steps.
func FiguresOf(res *Result) Figures {
	c := res.Config
	n := c.Ranks()
	f := Figures{Hosts: c.Hosts, Devices: c.Devices, PerDevice: c.Batch / n, TrainSeeds: res.TrainSeeds, Exchanged: c.Features.Exchanged()}
	rowBytes := 4 * float64(res.FeatDim)
	wireRow := 4 + rowBytes
	full := 0
	var imb, peer, wire float64
	for _, st := range res.Steps {
		var most, sum int64
		whole := true
		var peerMax float64
		for _, rs := range st.Ranks {
			most, sum = max(most, rs.Edges), sum+rs.Edges
			whole = whole && rs.Seeds == f.PerDevice
			pb := float64(rs.Lists.RemoteBytes)
			if c.Features == Peer {
				pb += float64(rs.Rows.SameHost) * rowBytes
			}
			peerMax = max(peerMax, pb)
		}
		if !whole || sum == 0 {
			continue
		}
		full++
		imb += float64(most) * float64(n) / float64(sum)
		peer += peerMax
		wire += float64(st.Chunk*st.Gathers) * wireRow
	}
	if full == 0 {
		f.Imbalance = 1
		return f
	}
	f.Imbalance = imb / float64(full)
	f.PeerBytes = peer / float64(full)
	if f.Exchanged {
		perPeer := wire / float64(full)
		f.WireHostBytes = perPeer * float64(c.Devices-1)
		f.WireNetBytes = perPeer * float64(n-c.Devices)
	}
	return f
}

// Model predicts a data-parallel epoch from a single GPU's step times,
// the figures of a simulation and the links.
type Model struct {
	Step       StepTimes
	Links      Links
	ParamBytes int64 // the gradients all-reduced every step
}

// Prediction is the model's epoch of one job, its step split into what
// costs time (ms per full step).
type Prediction struct {
	Hosts     int     `json:"hosts"`
	Devices   int     `json:"devices_per_host"`
	PerDevice int     `json:"per_device_batch"`
	Steps     int     `json:"steps"`
	Compute   float64 `json:"compute_ms"`   // one GPU's step at the per-device batch
	Imbalance float64 `json:"imbalance_ms"` // waiting for the slowest rank
	NVLink    float64 `json:"nvlink_ms"`    // reads from peers, and the fetch within the host not hidden
	Network   float64 `json:"network_ms"`   // the fetch from other hosts not hidden
	AllReduce float64 `json:"allreduce_ms"` // the step's collectives
	StepMs    float64 `json:"step_ms"`
	EpochS    float64 `json:"epoch_s"`
	Speedup   float64 `json:"speedup"`
	Bound     string  `json:"bound"`    // the largest part of the step
	Overhead  string  `json:"overhead"` // the largest part besides compute
}

// ParamBytes is the float32 parameters of a GraphSAGE model of layers
// layers (each [2·in, out] weights and a bias) from featDim inputs through
// hidden to classes outputs.
func ParamBytes(featDim, hidden, classes, layers int) int64 {
	var n int64
	in := featDim
	for l := range layers {
		out := hidden
		if l == layers-1 {
			out = classes
		}
		n += int64(2*in*out + out)
		in = out
	}
	return 4 * n
}

// Predict is the epoch of the job f describes.
func (m *Model) Predict(f Figures) (Prediction, error) {
	if err := m.Step.Check(); err != nil {
		return Prediction{}, err
	}
	if err := m.Links.Check(); err != nil {
		return Prediction{}, err
	}
	n := f.Hosts * f.Devices
	b := f.PerDevice
	if n < 1 || b < 1 {
		return Prediction{}, fmt.Errorf("simulate: %d ranks of %d seeds", n, b)
	}
	p := Prediction{Hosts: f.Hosts, Devices: f.Devices, PerDevice: b}
	l := m.Links
	p.Compute = m.Step.At(float64(b))
	p.Imbalance = (p.Compute - m.Step.Fixed()) * max(0, f.Imbalance-1)
	intra := l.intra() * 1e6 // bytes per ms
	p.NVLink = f.PeerBytes / intra
	if n > 1 {
		lat, bw := l.CollectiveUs/1e3, intra
		if f.Hosts > 1 {
			lat, bw = l.NetCollectiveUs/1e3, l.NetGBs*1e6
		}
		p.AllReduce = float64(l.Collectives)*lat + 2*float64(n-1)/float64(n)*float64(m.ParamBytes)/bw
		if f.Exchanged {
			// Two all-to-alls beside the step: their latency and
			// the slower level's bytes, less what the compute hides.
			host, net := f.WireHostBytes/intra, f.WireNetBytes/(l.NetGBs*1e6)
			fetch := 2*lat + max(host, net)
			hidden := l.Overlap * p.Compute
			if exposed := max(0, fetch-hidden); host >= net {
				p.NVLink += exposed
			} else {
				p.Network += exposed
			}
		}
	}
	p.StepMs = p.Compute + p.Imbalance + p.NVLink + p.Network + p.AllReduce
	full := f.TrainSeeds / (b * n)
	rem := f.TrainSeeds - full*b*n
	p.Steps = full
	ms := float64(full) * p.StepMs
	if rem > 0 {
		p.Steps++
		comm := (p.NVLink + p.Network) * float64(rem) / float64(b*n)
		ms += m.Step.At(float64(min(b, rem))) + comm + p.AllReduce
	}
	p.EpochS = ms / 1e3
	parts := []struct {
		name string
		ms   float64
	}{{"compute", p.Compute}, {"imbalance", p.Imbalance}, {"NVLink", p.NVLink}, {"network", p.Network}, {"all-reduce", p.AllReduce}}
	if l.IntraPCIe {
		parts[2].name = "PCIe"
	}
	best, next := 0, -1
	for i, q := range parts {
		if q.ms > parts[best].ms {
			best = i
		}
		if i > 0 && q.ms > 0 && (next < 0 || q.ms > parts[next].ms) {
			next = i
		}
	}
	p.Bound, p.Overhead = parts[best].name, "none"
	if next >= 0 {
		p.Overhead = parts[next].name
	}
	return p, nil
}

// OneGPU is the epoch of one GPU alone at a batch of batch seeds.
func (m *Model) OneGPU(trainSeeds, batch int) (Prediction, error) {
	return m.Predict(Figures{Hosts: 1, Devices: 1, PerDevice: batch, TrainSeeds: trainSeeds, Imbalance: 1})
}
