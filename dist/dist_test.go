package dist

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

var fast = Options{JoinTimeout: 2 * time.Second, Heartbeat: 50 * time.Millisecond, DeadAfter: 300 * time.Millisecond}

func serve(t *testing.T, world int) *Server {
	t.Helper()
	s, err := Serve("127.0.0.1:0", world, "secret", fast)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// joinAll joins ranks 0..n-1 concurrently.
func joinAll(t *testing.T, s *Server, world int, ranks ...int) ([]*Client, []error) {
	cs, errs := make([]*Client, len(ranks)), make([]error, len(ranks))
	var wg sync.WaitGroup
	for i, r := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs[i], errs[i] = Join(context.Background(), s.Addr(), r, world, "secret", fast)
		}()
	}
	wg.Wait()
	return cs, errs
}

func TestJoinAndExchange(t *testing.T) {
	s := serve(t, 3)
	cs, errs := joinAll(t, s, 3, 0, 1, 2)
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		defer cs[r].Close()
	}
	id := []byte("128 bytes of a collective's unique id")
	var wg sync.WaitGroup
	for r := 1; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := cs[r].Get(context.Background(), "nccl-id")
			if err != nil || string(got) != string(id) {
				t.Errorf("rank %d: %q, %v", r, got, err)
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if err := cs[0].Set(context.Background(), "nccl-id", id); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := cs[1].Set(context.Background(), "nccl-id", []byte("again")); err == nil || !strings.Contains(err.Error(), "set already") {
		t.Errorf("setting a key twice: %v", err)
	}
	// Heartbeats keep quiet ranks alive past DeadAfter.
	time.Sleep(3 * fast.DeadAfter)
	for r, c := range cs {
		if err := c.Err(); err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

func TestStrangerAndDuplicateRefused(t *testing.T) {
	s := serve(t, 2)
	_, err := Join(context.Background(), s.Addr(), 0, 2, "guess", fast)
	if err == nil || !strings.Contains(err.Error(), "wrong token") {
		t.Fatalf("a stranger: %v", err)
	}
	done := make(chan error, 1)
	var first *Client
	go func() {
		var err error
		first, err = Join(context.Background(), s.Addr(), 0, 2, "secret", fast)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	_, err = Join(context.Background(), s.Addr(), 0, 2, "secret", fast)
	if err == nil || !strings.Contains(err.Error(), "rank 0 has joined already") {
		t.Fatalf("a duplicate rank: %v", err)
	}
	if _, err := Join(context.Background(), s.Addr(), 5, 2, "secret", fast); err == nil || !strings.Contains(err.Error(), "outside 0..1") {
		t.Fatalf("rank 5 of 2: %v", err)
	}
	second, err := Join(context.Background(), s.Addr(), 1, 2, "secret", fast)
	if err != nil {
		t.Fatalf("the real rank 1: %v", err)
	}
	defer second.Close()
	if err := <-done; err != nil {
		t.Fatalf("rank 0: %v", err)
	}
	first.Close()
}

func TestMissingRankTimesOut(t *testing.T) {
	s := serve(t, 3)
	start := time.Now()
	_, errs := joinAll(t, s, 3, 0, 1)
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "ranks [2] did not join") {
			t.Errorf("rank %d: %v", r, err)
		}
	}
	if d := time.Since(start); d > fast.JoinTimeout+2*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestDeadRankDetected(t *testing.T) {
	s := serve(t, 2)
	cs, errs := joinAll(t, s, 2, 0, 1)
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	defer cs[0].Close()
	cs[1].conn.Close() // dies: no goodbye
	select {
	case <-cs[0].Failed():
	case <-time.After(2 * time.Second):
		t.Fatal("rank 0 did not hear that rank 1 died")
	}
	if err := cs[0].Err(); err == nil || !strings.Contains(err.Error(), "rank 1") {
		t.Fatalf("Err: %v", err)
	}
	if _, err := cs[0].Get(context.Background(), "never"); err == nil {
		t.Fatal("a Get after the failure returned no error")
	}
}

func TestFromEnv(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want *Launch
		err  string
	}{
		{[]string{"PATH=/bin"}, nil, ""},
		{[]string{"RANK=1", "WORLD_SIZE=4", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=node1", "MASTER_PORT=1234"},
			&Launch{Launcher: "torchrun", Rank: 1, WorldSize: 4, LocalRank: 1, LocalWorldSize: 2, MasterAddr: "node1", MasterPort: 1234}, ""},
		{[]string{"RANK=4", "WORLD_SIZE=4", "MASTER_ADDR=a"}, nil, "rank 4 of a world of 4"},
		{[]string{"RANK=0", "WORLD_SIZE=2"}, nil, "MASTER_ADDR is not set"},
		{[]string{"RANK=x", "WORLD_SIZE=2", "MASTER_ADDR=a"}, nil, `RANK="x"`},
		{[]string{"RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=a", "MASTER_PORT=99999"}, nil, "not a port"},
		{[]string{"SLURM_PROCID=3", "SLURM_NTASKS=8", "SLURM_LOCALID=1", "SLURM_JOB_NODELIST=gpu[03-05,07]"},
			&Launch{Launcher: "slurm", Rank: 3, WorldSize: 8, LocalRank: 1, MasterAddr: "gpu03", MasterPort: DefaultPort}, ""},
		{[]string{"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_LOCAL_SIZE=2", "MASTER_ADDR=127.0.0.1"},
			&Launch{Launcher: "mpirun", Rank: 1, WorldSize: 2, LocalRank: 1, LocalWorldSize: 2, MasterAddr: "127.0.0.1", MasterPort: DefaultPort}, ""},
	} {
		got, err := FromEnv(c.env)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.env, err, c.err)
			}
			continue
		}
		if err != nil || (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("%v: %+v, %v; want %+v", c.env, got, err, c.want)
		}
	}
}

func TestFirstHost(t *testing.T) {
	for in, want := range map[string]string{"node7": "node7", "a1,b2": "a1", "gpu[03-05,07],cpu1": "gpu03", "n[9]": "n9"} {
		if got, err := FirstHost(in); err != nil || got != want {
			t.Errorf("FirstHost(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "gpu[03-05", "gpu[]"} {
		if _, err := FirstHost(bad); err == nil {
			t.Errorf("FirstHost(%q): no error", bad)
		}
	}
}
