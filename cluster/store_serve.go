package cluster

import (
	"bufio"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/fanout-gnn/fanout/internal/quote"
)

// serve handles one connection: the join, then requests until it closes.
// Until the token is checked, the connection has AuthTimeout to send its
// join in at most MaxJoinMessage bytes, or is dropped with a log line.
func (s *Server) serve(c net.Conn) {
	r := bufio.NewReaderSize(c, 4<<10)
	p := &peer{conn: c, enc: json.NewEncoder(c), lastSeen: time.Now()}
	c.SetReadDeadline(time.Now().Add(s.opt.AuthTimeout))
	m, err := readMsg(r, MaxJoinMessage)
	if err == nil && m.Op != "join" {
		err = fmt.Errorf("its first message is %s, not a join", quote.Quote(m.Op))
	}
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			err = fmt.Errorf("no join within %s", s.opt.AuthTimeout)
		}
		s.logf("rendezvous: dropped a connection from %s before it joined: %v", c.RemoteAddr(), err)
		c.Close()
		return
	}
	rank, err := s.admit(m, p)
	if err != nil {
		s.logf("rendezvous: refused a join from %s: %v", c.RemoteAddr(), err)
		p.send(msg{Op: "err", ID: m.ID, Err: err.Error()})
		c.Close()
		return
	}
	p.send(msg{Op: "ok", ID: m.ID})
	for {
		c.SetReadDeadline(time.Now().Add(s.opt.DeadAfter))
		m, err := readMsg(r, s.opt.MaxMessage)
		if err != nil {
			s.mu.Lock()
			if !p.bye && !s.closed {
				s.fail(fmt.Errorf("rank %d disconnected: %v", rank, err))
			}
			delete(s.joined, rank)
			s.mu.Unlock()
			s.cond.Broadcast() // Drain waits for the ranks to leave
			c.Close()
			return
		}
		s.mu.Lock()
		p.lastSeen = time.Now()
		s.mu.Unlock()
		s.handle(p, m)
	}
}

// errTooLarge is a message past its bound; the connection is dropped
// without reading the rest.
type errTooLarge int

func (e errTooLarge) Error() string { return fmt.Sprintf("a message larger than %d bytes", int(e)) }

// readMsg reads one message, a JSON line of at most limit bytes: a longer
// one fails as soon as limit bytes are read, so a client cannot make the
// store hold more.
func readMsg(r *bufio.Reader, limit int) (msg, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			return msg{}, errTooLarge(limit)
		}
		line = append(line, chunk...)
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return msg{}, err
		}
	}
	var m msg
	if err := json.Unmarshal(line, &m); err != nil {
		return msg{}, fmt.Errorf("not a message of the store: %v", err)
	}
	return m, nil
}

// logf writes one line to Options.Log, when set.
func (s *Server) logf(format string, args ...any) {
	if s.opt.Log != nil {
		fmt.Fprintf(s.opt.Log, format+"\n", args...)
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
			p.send(msg{Op: "err", ID: m.ID, Err: fmt.Sprintf("key %s is set already", quote.Quote(m.Key))})
			return
		}
		p.send(msg{Op: "ok", ID: m.ID})
	case "get", "all":
		go s.wait(p, m)
	default:
		p.send(msg{Op: "err", ID: m.ID, Err: fmt.Sprintf("unknown request %s", quote.Quote(m.Op))})
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
