package npz

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/internal/quote"
)

// TestArchiveErrorsQuoteLittle: member names come from the file; an error
// quotes at most quote.Limit bytes of them.
func TestArchiveErrorsQuoteLittle(t *testing.T) {
	long := strings.Repeat("k", 5000)
	var twice bytes.Buffer
	zw := zip.NewWriter(&twice)
	for range 2 {
		if _, err := zw.Create(long + ".npy"); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	_, err := NewArchive(bytes.NewReader(twice.Bytes()), int64(twice.Len()), "twice.npz")
	checkQuoted(t, err, "appears twice")

	var many []member
	for i := range 50 {
		many = append(many, member{long + strings.Repeat("x", i), []int32{1}, []int64{1}})
	}
	b := npzBytes(t, many)
	a, err := NewArchive(bytes.NewReader(b), int64(len(b)), "many.npz")
	if err != nil {
		t.Fatal(err)
	}
	_, err = importArchive(a, smallSplit, maxDenseElems)
	checkQuoted(t, err, "no adjacency matrix")
	_, _, err = a.Read("labels")
	checkQuoted(t, err, `no array "labels" (has 50 arrays: "kkk`)
}

// checkQuoted checks that err says want and quotes at most quote.Limit
// bytes of the long name.
func checkQuoted(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	if msg := err.Error(); strings.Contains(msg, strings.Repeat("k", quote.Limit+1)) || len(msg) > 2*quote.Limit+200 {
		t.Errorf("error of %d bytes quotes too much: %.300s", len(msg), msg)
	}
}
