package simulate

// Add is a with b's figures added (Need: the larger).
func (a RankStep) Add(b RankStep) RankStep {
	a.Seeds += b.Seeds
	a.Edges += b.Edges
	a.Lists.Local += b.Lists.Local
	a.Lists.Replica += b.Lists.Replica
	a.Lists.Remote += b.Lists.Remote
	a.Lists.RemoteBytes += b.Lists.RemoteBytes
	a.Rows.Local += b.Rows.Local
	a.Rows.Replica += b.Rows.Replica
	a.Rows.SameHost += b.Rows.SameHost
	a.Rows.OtherHost += b.Rows.OtherHost
	a.Rows.Reused += b.Rows.Reused
	a.Need = max(a.Need, b.Need)
	return a
}

// Div is a sum of k ranks' or steps' figures divided by k (rounded down):
// their mean.
func (a RankStep) Div(k int) RankStep {
	d := int64(max(k, 1))
	a.Seeds /= int(d)
	a.Edges /= d
	a.Lists = Lists{Local: a.Lists.Local / d, Replica: a.Lists.Replica / d, Remote: a.Lists.Remote / d, RemoteBytes: a.Lists.RemoteBytes / d}
	a.Rows = Rows{Local: a.Rows.Local / d, Replica: a.Rows.Replica / d, SameHost: a.Rows.SameHost / d, OtherHost: a.Rows.OtherHost / d, Reused: a.Rows.Reused / d}
	return a
}
