package checkpoint

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
)

// DatasetInfo identifies the dataset a checkpoint was trained on: its name
// and a fingerprint (sizes and a hash of the split). Format-1 checkpoints
// carry no Edges or SplitHash.
type DatasetInfo struct {
	Name      string `json:"name"`
	Vertices  int64  `json:"vertices"`
	Edges     int64  `json:"edges,omitempty"`
	FeatDim   int    `json:"feat_dim"`
	Classes   int    `json:"classes"`
	SplitHash string `json:"split_hash,omitempty"` // SplitHash of the train/valid/test ids
}

// SplitHash is the hex SHA-256 of the three splits: for each, its length
// and then its ids, as little-endian int64.
func SplitHash(train, valid, test []int64) string {
	h := sha256.New()
	buf := make([]byte, 0, 8<<10)
	for _, ids := range [][]int64{train, valid, test} {
		buf = binary.LittleEndian.AppendUint64(buf[:0], uint64(len(ids)))
		for _, v := range ids {
			if len(buf) == cap(buf) {
				h.Write(buf)
				buf = buf[:0]
			}
			buf = binary.LittleEndian.AppendUint64(buf, uint64(v))
		}
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Mismatch compares the dataset a checkpoint was trained on (d) with
// another's fingerprint and says how they differ; "" when they agree. What
// d does not record (a format-1 checkpoint's edges and split) is not
// compared.
func (d DatasetInfo) Mismatch(other DatasetInfo) string {
	var diff []string
	add := func(what string, a, b any) { diff = append(diff, fmt.Sprintf("%s %v (checkpoint: %v)", what, b, a)) }
	if d.Vertices != other.Vertices {
		add("vertices", d.Vertices, other.Vertices)
	}
	if d.Edges != 0 && d.Edges != other.Edges {
		add("edges", d.Edges, other.Edges)
	}
	if d.FeatDim != other.FeatDim {
		add("features", d.FeatDim, other.FeatDim)
	}
	if d.Classes != other.Classes {
		add("classes", d.Classes, other.Classes)
	}
	if d.SplitHash != "" && d.SplitHash != other.SplitHash {
		diff = append(diff, fmt.Sprintf("split %s (checkpoint: %s)", short(other.SplitHash), short(d.SplitHash)))
	}
	return strings.Join(diff, ", ")
}

// short abbreviates a hash for messages.
func short(h string) string { return h[:min(len(h), 12)] }
