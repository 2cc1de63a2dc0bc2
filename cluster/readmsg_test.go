package cluster

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzReadMsg: the store's reader of a connection's bytes never panics,
// never reads a message longer than its limit, and reads back what a
// client's encoder wrote.
func FuzzReadMsg(f *testing.F) {
	f.Add([]byte(`{"op":"join","id":1,"token":"secret","rank":0,"world":2}` + "\n"))
	f.Add([]byte(`{"op":"set","key":"nccl-id","value":"AAEC"}` + "\n" + `{"op":"ping"}` + "\n"))
	f.Add([]byte("not json\n"))
	f.Add(bytes.Repeat([]byte("a"), 5000))
	f.Fuzz(func(t *testing.T, b []byte) {
		const limit = 1 << 10
		r := bufio.NewReaderSize(bytes.NewReader(b), 64)
		read := 0
		for {
			m, err := readMsg(r, limit)
			if err != nil {
				return
			}
			line, _, _ := bytes.Cut(b[read:], []byte("\n"))
			if len(line)+1 > limit {
				t.Fatalf("read a message of %d bytes past the limit %d: %+v", len(line)+1, limit, m)
			}
			read += len(line) + 1
		}
	})
}
