package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Client is one rank's connection to the store.
type Client struct {
	conn net.Conn
	enc  *json.Encoder
	wmu  sync.Mutex
	opt  Options

	mu      sync.Mutex
	next    int
	waiting map[int]chan msg
	err     error // the job's failure, or the lost connection
	done    chan struct{}
}

// Join connects rank to the store at addr for a job of world ranks sharing
// token, and returns once every rank has joined. It fails with the store's
// reason (wrong token, duplicate rank, ranks missing after the join
// timeout) or when the store cannot be reached within the join timeout.
func Join(ctx context.Context, addr string, rank, world int, token string, opt Options) (*Client, error) {
	opt = opt.withDefaults()
	// A little past the store's own join timeout, so that its reason (which
	// ranks are missing) arrives first.
	ctx, cancel := context.WithTimeout(ctx, opt.JoinTimeout+opt.DeadAfter)
	defer cancel()
	var conn net.Conn
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			conn = c
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("rendezvous: rank %d could not reach the store at %s within %s: %v", rank, addr, opt.JoinTimeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	c := &Client{conn: conn, enc: json.NewEncoder(conn), opt: opt, waiting: map[int]chan msg{}, done: make(chan struct{})}
	go c.read()
	if _, err := c.call(ctx, msg{Op: "join", Token: token, Rank: rank, World: world}); err != nil {
		c.conn.Close()
		return nil, fmt.Errorf("rendezvous: rank %d refused: %w", rank, err)
	}
	go c.beat()
	if _, err := c.call(ctx, msg{Op: "all"}); err != nil {
		c.Close()
		return nil, fmt.Errorf("rendezvous: rank %d: waiting for every rank to join: %w", rank, err)
	}
	return c, nil
}

// read dispatches replies and the store's failure notices.
func (c *Client) read() {
	dec := json.NewDecoder(bufio.NewReader(c.conn))
	for {
		var m msg
		if err := dec.Decode(&m); err != nil {
			c.setErr(fmt.Errorf("lost the rendezvous store: %v", err))
			return
		}
		if m.Op == "fail" {
			c.setErr(errors.New(m.Err))
		}
		c.mu.Lock()
		ch := c.waiting[m.ID]
		delete(c.waiting, m.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

func (c *Client) setErr(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		close(c.done)
	}
}

// Err is the job's failure (a peer died, the store is gone), or nil.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Failed is closed when Err becomes non-nil.
func (c *Client) Failed() <-chan struct{} { return c.done }

func (c *Client) send(m msg) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.conn.SetWriteDeadline(time.Now().Add(c.opt.DeadAfter))
	return c.enc.Encode(m)
}

// call sends a request and waits for its reply, the job's failure or ctx.
func (c *Client) call(ctx context.Context, m msg) (msg, error) {
	ch := make(chan msg, 1)
	c.mu.Lock()
	c.next++
	m.ID = c.next
	c.waiting[m.ID] = ch
	c.mu.Unlock()
	if err := c.send(m); err != nil {
		return msg{}, fmt.Errorf("rendezvous: %v", err)
	}
	select {
	case r := <-ch:
		return reply(r)
	case <-c.done:
		// read hands a reply over before it notices the connection closing
		// behind it (a refusal is sent, then the store hangs up): the reply,
		// when there is one, is the better reason.
		select {
		case r := <-ch:
			return reply(r)
		default:
			return msg{}, c.Err()
		}
	case <-ctx.Done():
		return msg{}, fmt.Errorf("rendezvous: %s %q: %w", m.Op, m.Key, ctx.Err())
	}
}

// reply turns the store's answer into a result.
func reply(r msg) (msg, error) {
	if r.Op != "ok" {
		return r, errors.New(r.Err)
	}
	return r, nil
}

// beat sends heartbeats until the client closes or the job fails.
func (c *Client) beat() {
	t := time.NewTicker(c.opt.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if c.send(msg{Op: "ping"}) != nil {
				return
			}
		case <-c.done:
			return
		}
	}
}

// Set stores value under key (once per key in a job).
func (c *Client) Set(ctx context.Context, key string, value []byte) error {
	_, err := c.call(ctx, msg{Op: "set", Key: key, Value: value})
	return err
}

// Get waits until key is set and returns its value.
func (c *Client) Get(ctx context.Context, key string) ([]byte, error) {
	r, err := c.call(ctx, msg{Op: "get", Key: key})
	return r.Value, err
}

// Close leaves the job cleanly (the store does not count it as dead).
func (c *Client) Close() error {
	c.send(msg{Op: "bye"})
	c.setErr(errors.New("rendezvous: closed"))
	return c.conn.Close()
}
