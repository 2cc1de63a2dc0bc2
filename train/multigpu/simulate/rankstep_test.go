package simulate

import "testing"

// The mean of ranks' figures is their sum over their count; Need is the
// largest, not a mean.
func TestRankStepMean(t *testing.T) {
	a := RankStep{Seeds: 4, Edges: 10, Lists: Lists{Local: 6, Remote: 2, RemoteBytes: 8}, Rows: Rows{Local: 3, SameHost: 5, Reused: 1}, Need: 7}
	b := RankStep{Seeds: 2, Edges: 20, Lists: Lists{Local: 2, Replica: 4}, Rows: Rows{OtherHost: 9, Reused: 3}, Need: 2}
	got := a.Add(b).Div(2)
	want := RankStep{Seeds: 3, Edges: 15, Lists: Lists{Local: 4, Replica: 2, Remote: 1, RemoteBytes: 4}, Rows: Rows{Local: 1, SameHost: 2, OtherHost: 4, Reused: 2}, Need: 7}
	if got != want {
		t.Fatalf("mean %+v, want %+v", got, want)
	}
}
