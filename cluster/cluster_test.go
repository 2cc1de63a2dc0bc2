package cluster

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// steady are options under which no rank of a test dies unless it means
// to: a rank is dead only after 5 s without a word, while every rank
// speaks every 20 ms. Tests wait for events (a reply, a failure, the
// store's state) with deadlines of seconds, never for a fixed time: on a
// loaded machine either kind of sleep decides wrongly.
var steady = Options{JoinTimeout: 10 * time.Second, Heartbeat: 20 * time.Millisecond, DeadAfter: 5 * time.Second}

// deadline bounds every wait of these tests.
const deadline = 20 * time.Second

func serve(t *testing.T, world int, opt Options) *Server {
	t.Helper()
	s, err := Serve("127.0.0.1:0", world, "secret", opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// joinAll joins ranks concurrently.
func joinAll(t *testing.T, s *Server, world int, opt Options, ranks ...int) ([]*Client, []error) {
	cs, errs := make([]*Client, len(ranks)), make([]error, len(ranks))
	var wg sync.WaitGroup
	for i, r := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs[i], errs[i] = Join(context.Background(), s.Addr(), r, world, "secret", opt)
		}()
	}
	wg.Wait()
	return cs, errs
}

// waitUntil polls cond (under the store's lock) until it holds, failing
// the test after the deadline.
func waitUntil(t *testing.T, s *Server, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		s.mu.Lock()
		ok := cond()
		s.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s: not within %s", what, deadline)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestJoinAndExchange(t *testing.T) {
	s := serve(t, 3, steady)
	cs, errs := joinAll(t, s, 3, steady, 0, 1, 2)
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
	if err := cs[0].Set(context.Background(), "nccl-id", id); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := cs[1].Set(context.Background(), "nccl-id", []byte("again")); err == nil || !strings.Contains(err.Error(), "set already") {
		t.Errorf("setting a key twice: %v", err)
	}
	// Heartbeats reach the store while the ranks say nothing else: each
	// rank is seen again after five heartbeats' time, and none has died.
	s.mu.Lock()
	since := map[int]time.Time{}
	for r, p := range s.joined {
		since[r] = p.lastSeen
	}
	s.mu.Unlock()
	waitUntil(t, s, "every rank's heartbeats", func() bool {
		for r, p := range s.joined {
			if p.lastSeen.Sub(since[r]) < 5*steady.Heartbeat {
				return false
			}
		}
		return len(s.joined) == 3
	})
	for r, c := range cs {
		if err := c.Err(); err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

func TestStrangerAndDuplicateRefused(t *testing.T) {
	s := serve(t, 2, steady)
	_, err := Join(context.Background(), s.Addr(), 0, 2, "guess", steady)
	if err == nil || !strings.Contains(err.Error(), "wrong token") {
		t.Fatalf("a stranger: %v", err)
	}
	done := make(chan error, 1)
	var first *Client
	go func() {
		var err error
		first, err = Join(context.Background(), s.Addr(), 0, 2, "secret", steady)
		done <- err
	}()
	// The first rank 0 is in (its join answered) before the second tries.
	waitUntil(t, s, "rank 0's join", func() bool { return s.joined[0] != nil })
	_, err = Join(context.Background(), s.Addr(), 0, 2, "secret", steady)
	if err == nil || !strings.Contains(err.Error(), "rank 0 has joined already") {
		t.Fatalf("a duplicate rank: %v", err)
	}
	if _, err := Join(context.Background(), s.Addr(), 5, 2, "secret", steady); err == nil || !strings.Contains(err.Error(), "outside 0..1") {
		t.Fatalf("rank 5 of 2: %v", err)
	}
	second, err := Join(context.Background(), s.Addr(), 1, 2, "secret", steady)
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
	opt := steady
	opt.JoinTimeout = 2 * time.Second
	s := serve(t, 3, opt)
	start := time.Now()
	_, errs := joinAll(t, s, 3, opt, 0, 1)
	// Rank 2 never comes; on a machine slow enough rank 1 may be late too.
	missing := regexp.MustCompile(`ranks \[(1 )?2\] did not join`)
	for r, err := range errs {
		if err == nil || !missing.MatchString(err.Error()) {
			t.Errorf("rank %d: %v", r, err)
		}
	}
	if d := time.Since(start); d > opt.JoinTimeout+deadline {
		t.Errorf("took %s", d)
	}
}

func TestDeadRankDetected(t *testing.T) {
	s := serve(t, 2, steady)
	cs, errs := joinAll(t, s, 2, steady, 0, 1)
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	defer cs[0].Close()
	cs[1].conn.Close() // dies: no goodbye
	select {
	case <-cs[0].Failed():
	case <-time.After(deadline):
		t.Fatal("rank 0 did not hear that rank 1 died")
	}
	if err := cs[0].Err(); err == nil || !strings.Contains(err.Error(), "rank 1") {
		t.Fatalf("Err: %v", err)
	}
	if _, err := cs[0].Get(context.Background(), "never"); err == nil {
		t.Fatal("a Get after the failure returned no error")
	}
}

// TestDrainWaitsForRanks: once rank 0 is done, Drain keeps the store up
// until the other ranks have left it, so that a rank still finishing does
// not lose the store and take that for a failure; it gives up after its
// timeout.
func TestDrainWaitsForRanks(t *testing.T) {
	s := serve(t, 2, steady)
	cs, errs := joinAll(t, s, 2, steady, 0, 1)
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	cs[0].Close()
	drained := make(chan bool, 1)
	go func() { drained <- s.Drain(deadline) }()
	waitUntil(t, s, "rank 0 leaving", func() bool { return s.joined[0] == nil })
	select {
	case <-drained:
		t.Fatal("Drain returned while rank 1 was in the store")
	default:
	}
	if err := cs[1].Err(); err != nil {
		t.Fatalf("rank 1, still finishing: %v", err)
	}
	cs[1].Close()
	select {
	case ok := <-drained:
		if !ok {
			t.Fatal("Drain: a rank is left")
		}
	case <-time.After(deadline):
		t.Fatal("Drain did not return once every rank had left")
	}

	s = serve(t, 1, steady)
	c, err := Join(context.Background(), s.Addr(), 0, 1, "secret", steady)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if s.Drain(10 * time.Millisecond) {
		t.Fatal("Drain: every rank left, while rank 0 is in the store")
	}
}

// rawJoin connects to the store and joins as rank, then says nothing more
// (no heartbeats): a process that hangs.
func rawJoin(t *testing.T, s *Server, rank, world int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, `{"op":"join","id":1,"token":"secret","rank":%d,"world":%d}`+"\n", rank, world)
	return c
}

// TestSilentRankDeclaredDead: a rank that joined and then says nothing is
// dead after DeadAfter, and the others hear so.
func TestSilentRankDeclaredDead(t *testing.T) {
	opt := steady
	opt.DeadAfter = time.Second // 50 heartbeats of the live rank
	s := serve(t, 2, opt)
	rawJoin(t, s, 1, 2)
	c, err := Join(context.Background(), s.Addr(), 0, 2, "secret", opt)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-c.Failed():
	case <-time.After(deadline):
		t.Fatal("rank 0 did not hear that the silent rank 1 died")
	}
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "rank 1") {
		t.Fatalf("Err: %v", err)
	}
}

// lines is a log that hands each line to a channel.
type lines struct {
	mu sync.Mutex
	ch chan string
}

func (l *lines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		l.ch <- line
	}
	return len(b), nil
}

// next waits for the log's next line.
func (l *lines) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-l.ch:
		return s
	case <-time.After(deadline):
		t.Fatalf("no log line within %s", deadline)
		return ""
	}
}

// TestUnauthenticatedClientsBounded: before its token is checked, a client
// that sends nothing is dropped after AuthTimeout, and one whose first
// message outgrows MaxJoinMessage (a join with a 400 MiB token grew rank 0
// to 917 MiB) as soon as that much is read, each with one log line; the
// job goes on and a real rank still joins.
func TestUnauthenticatedClientsBounded(t *testing.T) {
	log := &lines{ch: make(chan string, 16)}
	opt := steady
	opt.AuthTimeout, opt.Log = 300*time.Millisecond, log
	s := serve(t, 1, opt)

	silent, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if l := log.next(t); !strings.Contains(l, "dropped a connection from "+silent.LocalAddr().String()) || !strings.Contains(l, "no join within 300ms") {
		t.Fatalf("log: %q", l)
	}

	join := []byte(`{"op":"join","token":"` + strings.Repeat("a", 8<<20) + `"}` + "\n")
	big, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	go big.Write(join) // the store hangs up long before the end
	if l := log.next(t); !strings.Contains(l, "dropped a connection from "+big.LocalAddr().String()) || !strings.Contains(l, fmt.Sprintf("larger than %d bytes", MaxJoinMessage)) {
		t.Fatalf("log: %q", l)
	}
	// The store read at most the bound and a buffer and hung up.
	big.SetReadDeadline(time.Now().Add(deadline))
	if _, err := big.Read(make([]byte, 1)); err == nil {
		t.Fatal("the store kept the oversized client's connection")
	}

	c, err := Join(context.Background(), s.Addr(), 0, 1, "secret", opt)
	if err != nil {
		t.Fatalf("a real rank after the dropped clients: %v", err)
	}
	c.Close()
	select {
	case l := <-log.ch:
		t.Fatalf("a log line for the real rank: %q", l)
	default:
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
		{[]string{"RANK=" + strings.Repeat("x", 1000), "WORLD_SIZE=2", "MASTER_ADDR=a"}, nil, `xxx"... (1000 bytes) is not a count`},
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
