package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"sync"
	"time"
)

// The rendezvous store: rank 0 serves it at MASTER_ADDR:MASTER_PORT, every
// rank (rank 0 too) joins it. Messages are JSON lines. A rank joins with the
// job's token and its rank; the store refuses a wrong token, a rank out of
// range and a rank already joined. Join returns once every rank has joined,
// or fails after the join timeout naming the ranks missing. Keys are set
// once and read by any rank (Get waits for the key). Ranks send heartbeats;
// a rank whose connection drops, or that stays silent past the dead-after
// time, fails the job: every other rank's next call returns an error naming
// it, and Err says so at once.

// Options tune the store's timeouts and bounds.
type Options struct {
	JoinTimeout time.Duration // every rank must have joined by then (default 5 minutes)
	Heartbeat   time.Duration // a rank pings this often (default 1 s)
	DeadAfter   time.Duration // a silent rank is dead after this (default 10 heartbeats)
	// AuthTimeout is how long a new connection may take to send its join
	// (default 10 s); one that sends nothing is dropped.
	AuthTimeout time.Duration
	// MaxMessage bounds a joined rank's messages (default 1 MiB: the
	// values the store carries are ids of a few hundred bytes). Before the
	// token is checked a message may have at most MaxJoinMessage bytes.
	MaxMessage int
	// Log, when set, gets one line for each connection the store drops
	// or refuses before it joins (the address, and why).
	Log io.Writer
}

// MaxJoinMessage bounds a connection's first message, read before its
// token is checked: a join is a few hundred bytes, a token included.
const MaxJoinMessage = 16 << 10

func (o Options) withDefaults() Options {
	if o.JoinTimeout <= 0 {
		o.JoinTimeout = 5 * time.Minute
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Second
	}
	if o.DeadAfter <= 0 {
		o.DeadAfter = 10 * o.Heartbeat
	}
	if o.AuthTimeout <= 0 {
		o.AuthTimeout = 10 * time.Second
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = 1 << 20
	}
	return o
}

// msg is every message of the protocol.
type msg struct {
	Op    string `json:"op"` // join, set, get, ping, bye; replies: ok, err, fail
	ID    int    `json:"id,omitempty"`
	Token string `json:"token,omitempty"`
	Rank  int    `json:"rank,omitempty"`
	World int    `json:"world,omitempty"`
	Key   string `json:"key,omitempty"`
	Value []byte `json:"value,omitempty"`
	Err   string `json:"err,omitempty"`
}

// Server is the store, served by rank 0.
type Server struct {
	ln    net.Listener
	world int
	token string
	opt   Options

	mu      sync.Mutex
	cond    *sync.Cond
	joined  map[int]*peer
	values  map[string][]byte
	failed  error
	closed  bool
	started time.Time
}

type peer struct {
	conn     net.Conn
	enc      *json.Encoder
	wmu      sync.Mutex
	lastSeen time.Time
	bye      bool
}

func (p *peer) send(m msg) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	p.enc.Encode(m)
}

// Serve listens at addr ("host:port"; port 0 picks a free one, see Addr)
// for a job of world ranks that share token.
func Serve(addr string, world int, token string, opt Options) (*Server, error) {
	if world < 1 {
		return nil, fmt.Errorf("rendezvous: world size %d", world)
	}
	if token == "" {
		return nil, errors.New("rendezvous: an empty token would let anyone join; set one")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("rendezvous: listen on %s: %w", addr, err)
	}
	s := &Server{ln: ln, world: world, token: token, opt: opt.withDefaults(), joined: map[int]*peer{}, values: map[string][]byte{}, started: time.Now()}
	s.cond = sync.NewCond(&s.mu)
	go s.accept()
	go s.watch()
	return s, nil
}

// Addr is where the store listens.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Drain waits until every rank that joined has left the store (said
// goodbye and hung up), the job has failed or the store closed, or timeout
// has passed, and reports whether every rank left. Rank 0 calls it before
// Close once its run has finished: a rank still finishing its own would
// otherwise see the store go away and take that for the job's failure.
func (s *Server) Drain(timeout time.Duration) bool {
	expired := false
	t := time.AfterFunc(timeout, func() {
		s.mu.Lock()
		expired = true
		s.mu.Unlock()
		s.cond.Broadcast()
	})
	defer t.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.joined) > 0 && s.failed == nil && !s.closed && !expired {
		s.cond.Wait()
	}
	return len(s.joined) == 0
}

// Close stops the store.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for _, p := range s.joined {
		p.conn.Close()
	}
	s.mu.Unlock()
	s.cond.Broadcast()
	return s.ln.Close()
}

func (s *Server) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.serve(c)
	}
}

// fail marks the job failed and tells every rank. The caller holds s.mu.
func (s *Server) fail(err error) {
	if s.failed != nil || s.closed {
		return
	}
	s.failed = err
	for _, p := range s.joined {
		go p.send(msg{Op: "fail", Err: err.Error()})
	}
	s.cond.Broadcast()
}

// watch fails the job when a rank stays silent past DeadAfter, or when
// the ranks have not all joined within JoinTimeout.
func (s *Server) watch() {
	t := time.NewTicker(s.opt.Heartbeat / 2)
	defer t.Stop()
	for range t.C {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		for r, p := range s.joined {
			if !p.bye && time.Since(p.lastSeen) > s.opt.DeadAfter {
				s.fail(fmt.Errorf("rank %d stopped answering (no heartbeat for %s)", r, s.opt.DeadAfter))
			}
		}
		if len(s.joined) < s.world && time.Since(s.started) > s.opt.JoinTimeout {
			s.fail(fmt.Errorf("ranks %v did not join within %s", s.missing(), s.opt.JoinTimeout))
		}
		s.mu.Unlock()
	}
}

// missing lists the ranks not joined. The caller holds s.mu.
func (s *Server) missing() []int {
	var m []int
	for r := 0; r < s.world; r++ {
		if s.joined[r] == nil {
			m = append(m, r)
		}
	}
	sort.Ints(m)
	return m
}
