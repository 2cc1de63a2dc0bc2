package backendtest

import (
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/fanout-gnn/fanout/backend"
)

// testAwaitHost: AwaitHost hands a word of host memory to a goroutine and
// back. The device copies rows into host memory and sets the word (mask
// 0: no wait); the goroutine, seeing it, finds those rows there, writes
// rows of its own and sets the word to another value, which the device
// waits for (its op blocks until then) and resets; a gather after the
// wait reads the goroutine's rows.
func testAwaitHost(e *env) {
	tg := e.tiered()
	const n = 8
	word, sent, answer := []int32{0}, make([]int32, n), make([]int32, n)
	host := func(data []int32) backend.Buffer {
		b, err := backend.UploadHost(e.be, data)
		if err != nil {
			e.t.Fatalf("UploadHost: %v", err)
		}
		return b
	}
	flag, sentB, answerB := host(word), host(sent), host(answer)
	src := make([]int32, n)
	for i := range src {
		src[i] = int32(e.rnd.IntN(1000))
	}
	ids, cnt := e.upload([]int32{0, 1, 2, 3, 4, 5, 6, 7}), e.count(n, n)
	out := e.poisonI32(n)
	done := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(time.Minute)
		for atomic.LoadInt32(&word[0]) != 1 {
			if time.Now().After(deadline) {
				done <- fmt.Errorf("the device never set the word (it holds %d)", atomic.LoadInt32(&word[0]))
				return
			}
			runtime.Gosched()
		}
		if !slices.Equal(sent, src) {
			done <- fmt.Errorf("the word set, host memory holds %v, want the rows the device copied before, %v", sent, src)
			return
		}
		time.Sleep(20 * time.Millisecond) // the device waits meanwhile
		for i := range answer {
			answer[i] = int32(100 + i)
		}
		atomic.StoreInt32(&word[0], 2)
		done <- nil
	}()
	e.be.Gather(e.upload(src), 1, ids, cnt, sentB)
	tg.AwaitHost(flag, 0, 1)
	tg.AwaitHost(flag, 1<<2|1<<5, 0)
	e.be.Gather(answerB, 1, ids, cnt, out)
	e.sync()
	if err := <-done; err != nil {
		e.t.Fatal(err)
	}
	if got := e.readI32(out, n); !slices.Equal(got, []int32{100, 101, 102, 103, 104, 105, 106, 107}) {
		e.t.Errorf("gathered after the wait: %v, want the goroutine's rows 100..107", got)
	}
	if w := atomic.LoadInt32(&word[0]); w != 0 {
		e.t.Errorf("the word holds %d after the wait, want the 0 it was set to", w)
	}
}
