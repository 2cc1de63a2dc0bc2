package dist

import (
	"bufio"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net"
	"time"
)

// serve handles one connection: the join, then requests until it closes.
func (s *Server) serve(c net.Conn) {
	dec := json.NewDecoder(bufio.NewReader(c))
	p := &peer{conn: c, enc: json.NewEncoder(c), lastSeen: time.Now()}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var m msg
	if err := dec.Decode(&m); err != nil || m.Op != "join" {
		c.Close()
		return
	}
	rank, err := s.admit(m, p)
	if err != nil {
		p.send(msg{Op: "err", ID: m.ID, Err: err.Error()})
		c.Close()
		return
	}
	p.send(msg{Op: "ok", ID: m.ID})
	for {
		c.SetReadDeadline(time.Now().Add(s.opt.DeadAfter))
		var m msg
		if err := dec.Decode(&m); err != nil {
			s.mu.Lock()
			if !p.bye && !s.closed {
				s.fail(fmt.Errorf("rank %d disconnected: %v", rank, err))
			}
			delete(s.joined, rank)
			s.mu.Unlock()
			c.Close()
			return
		}
		s.mu.Lock()
		p.lastSeen = time.Now()
		s.mu.Unlock()
		s.handle(p, m)
	}
}

// admit checks a join: the token, the rank, the world size.
func (s *Server) admit(m msg, p *peer) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case subtle.ConstantTimeCompare([]byte(m.Token), []byte(s.token)) != 1:
		return 0, fmt.Errorf("wrong token: this store serves another job")
	case m.World != s.world:
		return 0, fmt.Errorf("rank %d says the world has %d ranks; this job has %d", m.Rank, m.World, s.world)
	case m.Rank < 0 || m.Rank >= s.world:
		return 0, fmt.Errorf("rank %d is outside 0..%d", m.Rank, s.world-1)
	case s.joined[m.Rank] != nil:
		return 0, fmt.Errorf("rank %d has joined already (a duplicate process?)", m.Rank)
	case s.failed != nil:
		return 0, fmt.Errorf("the job has failed: %v", s.failed)
	}
	s.joined[m.Rank] = p
	s.cond.Broadcast()
	return m.Rank, nil
}

// handle answers one request; waits (for every rank, for a key) run in
// their own goroutine so heartbeats keep flowing.
func (s *Server) handle(p *peer, m msg) {
	switch m.Op {
	case "ping":
	case "bye":
		s.mu.Lock()
		p.bye = true
		s.mu.Unlock()
	case "set":
		s.mu.Lock()
		_, dup := s.values[m.Key]
		if !dup {
			s.values[m.Key] = m.Value
			s.cond.Broadcast()
		}
		s.mu.Unlock()
		if dup {
			p.send(msg{Op: "err", ID: m.ID, Err: fmt.Sprintf("key %q is set already", m.Key)})
			return
		}
		p.send(msg{Op: "ok", ID: m.ID})
	case "get", "all":
		go s.wait(p, m)
	default:
		p.send(msg{Op: "err", ID: m.ID, Err: fmt.Sprintf("unknown request %q", m.Op)})
	}
}

// wait answers a get (once the key is set) or an all (once every rank has
// joined), or the job's failure.
func (s *Server) wait(p *peer, m msg) {
	s.mu.Lock()
	for s.failed == nil && !s.closed {
		if _, ok := s.values[m.Key]; m.Op == "get" && ok {
			break
		}
		if m.Op == "all" && len(s.joined) == s.world {
			break
		}
		s.cond.Wait()
	}
	v, failed := s.values[m.Key], s.failed
	s.mu.Unlock()
	if failed != nil {
		p.send(msg{Op: "fail", ID: m.ID, Err: failed.Error()})
		return
	}
	p.send(msg{Op: "ok", ID: m.ID, Value: v})
}
