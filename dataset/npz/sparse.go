package npz

import (
	"fmt"

	"github.com/fanout-gnn/fanout/dataset/npy"
)

// csrKeys names the members of a CSR matrix in an archive: <prefix>_data,
// <prefix>_indices, <prefix>_indptr, <prefix>_shape in the gnn-benchmark
// layout (sep "_"), or <prefix>.data, ... in the flat dict of scipy
// matrices that later archives use (sep ".").
type csrKeys struct{ prefix, sep string }

// key names one member: key("shape") is adj_shape or adj_matrix.shape.
func (k csrKeys) key(part string) string { return k.prefix + k.sep + part }

// String names the matrix for messages: adj_* or adj_matrix.*.
func (k csrKeys) String() string { return k.key("*") }

// names lists the four members for messages.
func (k csrKeys) names() string {
	return k.key("data") + "/" + k.key("indices") + "/" + k.key("indptr") + "/" + k.key("shape")
}

// findCSR returns the first of candidates the archive holds a CSR matrix
// under.
func findCSR(a *Archive, candidates ...csrKeys) (csrKeys, bool) {
	for _, k := range candidates {
		if hasCSR(a, k) {
			return k, true
		}
	}
	return csrKeys{}, false
}

// csrMatrix is a scipy.sparse.csr_matrix stored under csrKeys.
type csrMatrix struct {
	rows, cols int64
	indptr     []int64   // [rows+1]
	indices    []int64   // [nnz] column ids in [0, cols)
	data       []float64 // [nnz]; nil when the archive has no <prefix>_data
}

// hasCSR reports whether the archive holds a CSR matrix under k.
func hasCSR(a *Archive, k csrKeys) bool {
	return a.Has(k.key("indptr")) || a.Has(k.key("indices"))
}

// readCSR reads and validates the CSR matrix stored under k.
func readCSR(a *Archive, k csrKeys, needData bool) (*csrMatrix, error) {
	m := &csrMatrix{}
	shape, err := readInts(a, k.key("shape"))
	if err != nil {
		return nil, err
	}
	if len(shape) != 2 || shape[0] < 0 || shape[1] < 0 {
		return nil, fmt.Errorf("%s: %s = %v, want two non-negative sizes", a.name, k.key("shape"), shape)
	}
	m.rows, m.cols = shape[0], shape[1]
	if m.indptr, err = readInts(a, k.key("indptr")); err != nil {
		return nil, err
	}
	if m.indices, err = readInts(a, k.key("indices")); err != nil {
		return nil, err
	}
	if needData || a.Has(k.key("data")) {
		raw, _, err := a.Read(k.key("data"))
		if err != nil {
			return nil, err
		}
		if m.data, err = npy.Float64s(raw); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", a.name, k.key("data"), err)
		}
		if len(m.data) != len(m.indices) {
			return nil, fmt.Errorf("%s: %s has %d values but %s has %d",
				a.name, k.key("data"), len(m.data), k.key("indices"), len(m.indices))
		}
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", a.name, k.prefix, err)
	}
	return m, nil
}

// validate checks the CSR invariants.
func (m *csrMatrix) validate() error {
	if int64(len(m.indptr)) != m.rows+1 {
		return fmt.Errorf("indptr has %d entries, want rows+1 = %d", len(m.indptr), m.rows+1)
	}
	if m.indptr[0] != 0 {
		return fmt.Errorf("indptr[0] = %d, want 0", m.indptr[0])
	}
	for i := int64(0); i < m.rows; i++ {
		if m.indptr[i+1] < m.indptr[i] {
			return fmt.Errorf("indptr decreases at row %d (%d < %d)", i, m.indptr[i+1], m.indptr[i])
		}
	}
	if last := m.indptr[m.rows]; last != int64(len(m.indices)) {
		return fmt.Errorf("indptr ends at %d but there are %d indices", last, len(m.indices))
	}
	for k, c := range m.indices {
		if c < 0 || c >= m.cols {
			return fmt.Errorf("indices[%d] = %d is out of range [0, %d)", k, c, m.cols)
		}
	}
	return nil
}

// readInts reads an integer array by key.
func readInts(a *Archive, key string) ([]int64, error) {
	raw, _, err := a.Read(key)
	if err != nil {
		return nil, err
	}
	v, err := npy.Int64s(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", a.name, key, err)
	}
	return v, nil
}
