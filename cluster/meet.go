package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Token is the job's shared secret: FANOUT_TOKEN, or the first line of
// the file FANOUT_TOKEN_FILE names.
func Token(getenv func(string) string) (string, error) {
	if t := strings.TrimSpace(getenv("FANOUT_TOKEN")); t != "" {
		return t, nil
	}
	if f := getenv("FANOUT_TOKEN_FILE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("FANOUT_TOKEN_FILE: %w", err)
		}
		if t := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]); t != "" {
			return t, nil
		}
		return "", fmt.Errorf("FANOUT_TOKEN_FILE %s: the first line is empty", f)
	}
	return "", errors.New("a job of several processes needs a shared token: set FANOUT_TOKEN (or FANOUT_TOKEN_FILE) to the same secret in every process")
}

// CheckDevicesPerHost refuses more processes on a host than it has
// devices (GPUs): two processes sharing one GPU would each hold a context
// and an NCCL rank on it, which NCCL does not allow within one
// communicator.
func (l *Launch) CheckDevicesPerHost(gpus int) error {
	local := l.LocalWorldSize
	if local == 0 {
		local = l.LocalRank + 1
	}
	if local > gpus {
		return fmt.Errorf("%d processes on this host but %d GPU(s): each process drives one GPU (LOCAL_RANK picks it); start at most %d per host", local, gpus, gpus)
	}
	return nil
}

// Drain is how long rank 0's store waits, after rank 0 finished, for the
// other ranks to finish and leave.
const Drain = 5 * time.Minute

// Meeting is this process's place in the job's rendezvous: its client of
// the store, and on rank 0 the store itself.
type Meeting struct {
	Client *Client
	srv    *Server
}

// Meet joins the job's rendezvous store at the launcher's master address,
// serving it first on rank 0, with the token and a join timeout of five
// minutes; the store's notes go to log.
func Meet(ctx context.Context, l *Launch, token string, log io.Writer) (*Meeting, error) {
	opt := Options{JoinTimeout: 5 * time.Minute, Log: log}
	m := &Meeting{}
	if l.Rank == 0 {
		srv, err := Serve(net.JoinHostPort("", strconv.Itoa(l.MasterPort)), l.WorldSize, token, opt)
		if err != nil {
			return nil, err
		}
		m.srv = srv
	}
	c, err := Join(ctx, net.JoinHostPort(l.MasterAddr, strconv.Itoa(l.MasterPort)), l.Rank, l.WorldSize, token, opt)
	if err != nil {
		m.Close(false)
		return nil, err
	}
	m.Client = c
	return m, nil
}

// Close leaves the store. On rank 0, after a run that finished, the store
// stays up until every rank has left it (at most Drain): a rank still
// finishing would otherwise lose it and abort its communicator, as after a
// peer's death.
func (m *Meeting) Close(finished bool) {
	if m.Client != nil {
		m.Client.Close()
	}
	if m.srv != nil {
		if finished {
			m.srv.Drain(Drain)
		}
		m.srv.Close()
	}
}

// ShareID hands rank 0's identifier (NCCL's unique id: size bytes, made by
// newID on rank 0 only) to every rank through the store under key.
func ShareID(ctx context.Context, c *Client, rank int, key string, size int, newID func() ([]byte, error)) ([]byte, error) {
	if rank == 0 {
		id, err := newID()
		if err != nil {
			return nil, err
		}
		return id, c.Set(ctx, key, id)
	}
	b, err := c.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if len(b) != size {
		return nil, fmt.Errorf("rendezvous: NCCL's id has %d bytes, want %d", len(b), size)
	}
	return b, nil
}

// AbortOnFailure calls abort when the job fails (a peer died, the store is
// gone), so that this rank does not hang in a collective, until the
// returned function is called: from then on, and never at the same time
// as abort, the communicator is the caller's to close.
func AbortOnFailure(c *Client, abort func(error)) (stop func()) {
	var mu sync.Mutex
	ended := make(chan struct{})
	go func() {
		select {
		case <-c.Failed():
		case <-ended:
			return
		}
		mu.Lock()
		defer mu.Unlock()
		select {
		case <-ended:
			return
		default:
		}
		if err := c.Err(); err != nil && !strings.Contains(err.Error(), "closed") {
			abort(err)
		}
	}()
	return func() {
		mu.Lock()
		close(ended)
		mu.Unlock()
	}
}

// RankZero is w on the job's rank 0 and io.Discard on the others: a note
// about the whole job is said once.
func (l *Launch) RankZero(w io.Writer) io.Writer {
	if l.Rank == 0 {
		return w
	}
	return io.Discard
}
