package ogb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
)

// chunk is a run of whole lines of a text file.
type chunk struct {
	seq       int    // position of the chunk in the file, from 0
	firstLine int64  // 0-based number of the chunk's first line
	lines     int64  // lines in data
	data      []byte // whole lines; only the file's last line may lack '\n'
	buf       []byte // the buffer data lives in, returned to the pool after use
}

// scanConfig controls scanChunks.
type scanConfig struct {
	name      string // file name for messages
	threads   int    // parsing goroutines (>= 1)
	chunkSize int    // bytes per chunk before line alignment
	maxLine   int    // longest accepted line, in bytes
}

// defaultChunkSize is the nominal chunk size: big enough to amortise the
// hand-off, small enough to keep every core busy on modest files.
const defaultChunkSize = 1 << 20

// defaultMaxLine bounds one line (a node-feat row of a few thousand floats is
// far below it); longer lines are an error rather than unbounded memory.
const defaultMaxLine = 64 << 20

// errStopped is what produceChunks returns when it stops after a chunk failed
// (scanChunks then returns that chunk's error instead).
var errStopped = errors.New("stopped")

// scanChunks splits r into line-aligned chunks and calls fn on them from
// cfg.threads goroutines. fn must be safe for concurrent use and must not keep
// c.data after it returns. On failure the error of the earliest failing
// chunk in file order is returned (so the message does not depend on
// scheduling); a read error is returned only when no chunk before it failed.
// On success it returns the number of lines in the file.
func scanChunks(r io.Reader, cfg scanConfig, fn func(c *chunk) error) (int64, error) {
	threads := max(cfg.threads, 1)
	work := make(chan *chunk, threads)
	free := make(chan []byte, 2*threads+1)
	for range cap(free) {
		free <- nil // buffers are allocated on first use
	}
	var (
		failedSeq atomic.Int64 // smallest seq of a failed chunk; MaxInt64 if none
		mu        sync.Mutex
		errs      = map[int]error{}
		wg        sync.WaitGroup
	)
	failedSeq.Store(math.MaxInt64)
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				// Chunks after a failed one are skipped; earlier ones still
				// run, so that the earliest error in the file is found.
				if int64(c.seq) < failedSeq.Load() {
					if err := fn(c); err != nil {
						mu.Lock()
						errs[c.seq] = err
						if int64(c.seq) < failedSeq.Load() {
							failedSeq.Store(int64(c.seq))
						}
						mu.Unlock()
					}
				}
				free <- c.buf
			}
		}()
	}
	lines, readErr := produceChunks(r, cfg, work, free, &failedSeq)
	close(work)
	wg.Wait()
	if first := failedSeq.Load(); first != math.MaxInt64 {
		return 0, errs[int(first)]
	}
	return lines, readErr
}

// produceChunks reads r and sends line-aligned chunks to work until the end
// of r, a read error, or a chunk has failed. It returns the number of lines sent.
func produceChunks(r io.Reader, cfg scanConfig, work chan<- *chunk, free chan []byte, failedSeq *atomic.Int64) (int64, error) {
	size := max(cfg.chunkSize, 1)
	var carry []byte // partial last line of the previous read
	var line int64
	for seq := 0; failedSeq.Load() == math.MaxInt64; seq++ {
		buf := <-free
		if cap(buf) < size || cap(buf) < 2*len(carry) {
			buf = make([]byte, max(size, 2*len(carry)))
		}
		buf = buf[:cap(buf)]
		n := copy(buf, carry)
		m, err := fill(r, buf[n:])
		data := buf[:n+m]
		final := false
		switch {
		case err == io.EOF:
			final = true
		case err != nil:
			free <- buf
			return line, readError(cfg.name, err)
		}
		carry = nil
		if !final {
			cut := bytes.LastIndexByte(data, '\n')
			if cut < 0 {
				if len(data) >= cfg.maxLine {
					free <- buf
					return line, longLine(&cfg, line)
				}
				carry = append([]byte(nil), data...) // a long line: read on with a bigger buffer
				free <- buf
				seq--
				continue
			}
			carry = append(carry[:0:0], data[cut+1:]...)
			data = data[:cut+1]
		}
		lines := int64(bytes.Count(data, []byte{'\n'}))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		work <- &chunk{seq: seq, firstLine: line, lines: lines, data: data, buf: buf}
		line += lines
		if final {
			return line, nil
		}
	}
	return line, errStopped
}

// fill reads into b until it is full or r fails; io.EOF means the input
// ended cleanly (unlike io.ReadFull, which would map an error after a
// short read to io.ErrUnexpectedEOF).
func fill(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// readError describes a failure to read (or decompress) a file; a gzip
// stream cut short is gzipfile.ErrTruncated.
func readError(name string, err error) error {
	return fmt.Errorf("%s: %w", name, err)
}

// eachLine calls fn on every line of c (without its '\n' or a trailing '\r')
// with the line's 0-based number in the file. A line of cfg.maxLine bytes or
// more is an error, with the same message produceChunks gives, so that the
// outcome does not depend on how the file was cut into chunks.
func (cfg *scanConfig) eachLine(c *chunk, fn func(line []byte, no int64) error) error {
	data, no := c.data, c.firstLine
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if len(line) >= cfg.maxLine {
			return longLine(cfg, no)
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if err := fn(line, no); err != nil {
			return err
		}
		no++
	}
	return nil
}

// longLine is the error for a line of cfg.maxLine bytes or more.
func longLine(cfg *scanConfig, no int64) error {
	return lineError(cfg.name, no, "longer than %d bytes", cfg.maxLine-1)
}

// lineError is a parse error at a 1-based line of a file.
func lineError(name string, no int64, format string, args ...any) error {
	return fmt.Errorf("%s: line %d: %s", name, no+1, fmt.Sprintf(format, args...))
}
