package dataset

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fanout-gnn/fanout/dtype"
	"github.com/fanout-gnn/fanout/graph"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// VertexType is one vertex type of a typed graph; its vertices have
// type-local ids 0..Count-1.
type VertexType struct {
	Name  string
	Count int64 // vertices, below 2^31 (relations hold int32 ids)
	// FeatDim is the width of the type's features; 0: the type has none
	// (the trainer learns an embedding for it).
	FeatDim int
	// Features is [Count, FeatDim] float32, row-major; nil when
	// FeaturesBF16 holds them or FeatDim is 0.
	Features []float32
	// FeaturesBF16 holds the features as bfloat16 bit patterns, as
	// Dataset.FeaturesBF16 does.
	FeaturesBF16 []uint16
	// FeatureFile, set instead of both by OpenWith's FeaturesOnDisk for a
	// type with features, reads the rows from types/<type>/feat.npy where
	// they lie, as Dataset.FeatureFile does (featfile.go).
	FeatureFile *FeatureFile
	// IDs are the vertices' original ids where the type was imported from
	// a node table (nil otherwise). Open leaves them nil, as it leaves
	// Dataset.IDs: ReadTypeIDs reads them.
	IDs *NodeIDs

	idsFile string // an opened dataset's node_ids of this type
}

// FeatureTable is the type's features as held, without a copy: Features
// ([]float32) or FeaturesBF16 ([]uint16), nil for a featureless type.
func (t *VertexType) FeatureTable() any {
	if t.FeaturesBF16 != nil {
		return t.FeaturesBF16
	}
	if t.Features == nil {
		return nil
	}
	return t.Features
}

// featureBytes is the size of the type's feature table as held (of a
// table left on disk, the file's rows).
func (t *VertexType) featureBytes() int64 {
	if f := t.FeatureFile; f != nil {
		return f.Rows * f.RowBytes()
	}
	size := int64(dtype.F32.Size())
	if t.FeaturesBF16 != nil {
		size = int64(dtype.BF16.Size())
	}
	return t.Count * int64(t.FeatDim) * size
}

// Relation is one edge type (source type, name, destination type):
// messages flow from Src's vertices to Dst's. Graph's rows are Dst's
// vertices (NumNodes = Types[Dst].Count), its indices Src-local ids (int32),
// each row sorted, without repeats.
type Relation struct {
	Name     string
	Src, Dst int // indices into Dataset.Types
	Graph    *graph.CSR
}

// Names of the one type and the one relation that VertexTypes and
// EdgeTypes give a dataset of one vertex type.
const (
	OneTypeName     = "node"
	OneRelationName = "to"
)

// ReversePrefix begins the name of a relation's reverse, as PyTorch
// Geometric's ToUndirected names it: (dst, "rev_"+name, src).
const ReversePrefix = "rev_"

// Typed reports whether the dataset has vertex types (Types) instead of
// one graph (Graph).
func (d *Dataset) Typed() bool { return len(d.Types) > 0 }

// VertexTypes is the dataset's vertex types: Types, or for a dataset of
// one type the one type OneTypeName holding its vertices, features and ids,
// so that code can treat every dataset as typed. The slice is the
// dataset's own for a typed dataset: do not modify it.
func (d *Dataset) VertexTypes() []VertexType {
	if d.Typed() {
		return d.Types
	}
	var n int64
	if d.Graph != nil {
		n = d.Graph.NumNodes
	}
	return []VertexType{{Name: OneTypeName, Count: n, FeatDim: d.FeatDim, Features: d.Features,
		FeaturesBF16: d.FeaturesBF16, IDs: d.IDs, idsFile: d.idsFile}}
}

// EdgeTypes is the dataset's relations: Relations, or for a dataset of one
// type the one relation OneRelationName (Src = Dst = 0, Graph = d.Graph).
func (d *Dataset) EdgeTypes() []Relation {
	if d.Typed() {
		return d.Relations
	}
	return []Relation{{Name: OneRelationName, Graph: d.Graph}}
}

// NumVertices is the number of vertices of every type.
func (d *Dataset) NumVertices() int64 {
	var n int64
	for _, t := range d.VertexTypes() {
		n += t.Count
	}
	return n
}

// NumEdges is the number of stored edges of every relation.
func (d *Dataset) NumEdges() int64 {
	var m int64
	for _, r := range d.EdgeTypes() {
		if r.Graph != nil {
			m += r.Graph.NumEdges()
		}
	}
	return m
}

// TypeIndex is the index of the vertex type named name, or -1.
func (d *Dataset) TypeIndex(name string) int {
	for i, t := range d.VertexTypes() {
		if t.Name == name {
			return i
		}
	}
	return -1
}

// RelationName is relation r of d as (src, name, dst), for messages.
func (d *Dataset) RelationName(r Relation) string {
	types := d.VertexTypes()
	name := func(i int) string {
		if i < 0 || i >= len(types) {
			return fmt.Sprintf("type %d", i)
		}
		return types[i].Name
	}
	return fmt.Sprintf("(%s, %s, %s)", name(r.Src), r.Name, name(r.Dst))
}

// MaxTypeVertices bounds a vertex type's count: relations hold int32 ids.
const MaxTypeVertices = graph.MaxInt32Vertices - 1

// Bounds of a typed dataset's schema.
const (
	MaxTypes     = 256  // vertex types
	MaxRelations = 4096 // relations, reverses included
	maxTypeName  = 64   // bytes of a type's or relation's name
)

// CheckName checks the name of a vertex type or relation (what names it,
// for the message): 1 to 64 bytes of ASCII letters, digits, '_' and '-',
// so that it names a directory of the dataset and a key of PyTorch
// Geometric's HeteroData as it is.
func CheckName(what, s string) error {
	if s == "" {
		return fmt.Errorf("%s is empty, want a name", what)
	}
	if len(s) > maxTypeName {
		return fmt.Errorf("%s %s is longer than %d bytes", what, quote.Quote(s), maxTypeName)
	}
	if i := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return fmt.Errorf("%s %s holds %s: want ASCII letters, digits, '_' and '-'", what, quote.Quote(s), quote.Quote(string(r)))
	}
	return nil
}
