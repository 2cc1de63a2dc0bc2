package cuda

import (
	"strings"
	"sync"
	"testing"
)

// TestMissingLibraryGivesTheLoadersReason: the loader's message is read on
// the thread that failed, so it is never blank, even with goroutines
// moving between threads.
func TestMissingLibraryGivesTheLoadersReason(t *testing.T) {
	var wg sync.WaitGroup
	errs := make([]error, 64)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = openLibrary("test library", "", []string{"libfanout-does-not-exist.so.1"})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "libfanout-does-not-exist.so.1: cannot open shared object file") {
			t.Fatalf("error %v lacks the loader's reason", err)
		}
	}
}
