package job

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/internal/atomicfile"
)

// keyByIDs writes, beside each of eval's per-vertex outputs (paths; ""
// skipped), the original ids of its rows, where the dataset in the
// directory data keeps them (fanout import edges): P.npy gets P.ids.npy
// (int64 [N]) or P.ids.txt (N lines): row i of P is the vertex whose
// original id is element i, or line i+1. A dataset without ids, or data
// "" (a preset), writes nothing.
func keyByIDs(data string, out io.Writer, paths ...string) error {
	if data == "" || strings.Join(paths, "") == "" {
		return nil
	}
	ids, err := dataset.ReadIDs(data)
	if err != nil || ids == nil {
		return err
	}
	return writeIDs(ids, out, paths...)
}

// keyTypeIDs is keyByIDs for an output whose rows are the vertices of
// type typ of the typed dataset in data.
func keyTypeIDs(data string, out io.Writer, path, typ string) error {
	ids, err := dataset.ReadTypeIDs(data, typ)
	if err != nil || ids == nil {
		return err
	}
	return writeIDs(ids, out, path)
}

// writeIDs writes ids beside each of paths ("" skipped).
func writeIDs(ids *dataset.NodeIDs, out io.Writer, paths ...string) (err error) {
	for _, p := range paths {
		if p == "" {
			continue
		}
		key := strings.TrimSuffix(p, ".npy") + ".ids"
		if ids.Strings != nil {
			key += ".txt"
			err = writeLines(key, ids.Strings)
		} else {
			key += ".npy"
			err = npy.WriteFile(key, ids.Ints, []int64{int64(len(ids.Ints))})
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote the original ids of %s's rows to %s\n", p, key)
	}
	return nil
}

// writeLines writes one line per string to path, atomically.
func writeLines(path string, lines []string) error {
	return atomicfile.WriteWith(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		for _, s := range lines {
			bw.WriteString(s)
			bw.WriteByte('\n')
		}
		return bw.Flush()
	})
}
