package npz

import (
	"fmt"
)

// csrMatrix is a scipy.sparse.csr_matrix stored as <prefix>_data,
// <prefix>_indices, <prefix>_indptr and <prefix>_shape in an archive.
type csrMatrix struct {
	rows, cols int64
	indptr     []int64   // [rows+1]
	indices    []int64   // [nnz] column ids in [0, cols)
	data       []float64 // [nnz]; nil when the archive has no <prefix>_data
}

// hasCSR reports whether the archive holds a CSR matrix under prefix.
func hasCSR(a *Archive, prefix string) bool {
	return a.Has(prefix+"_indptr") || a.Has(prefix+"_indices")
}

// readCSR reads and validates the CSR matrix stored under prefix.
func readCSR(a *Archive, prefix string, needData bool) (*csrMatrix, error) {
	m := &csrMatrix{}
	shape, err := readInts(a, prefix+"_shape")
	if err != nil {
		return nil, err
	}
	if len(shape) != 2 || shape[0] < 0 || shape[1] < 0 {
		return nil, fmt.Errorf("%s: %s_shape = %v, want two non-negative sizes", a.name, prefix, shape)
	}
	m.rows, m.cols = shape[0], shape[1]
	if m.indptr, err = readInts(a, prefix+"_indptr"); err != nil {
		return nil, err
	}
	if m.indices, err = readInts(a, prefix+"_indices"); err != nil {
		return nil, err
	}
	if needData || a.Has(prefix+"_data") {
		raw, _, err := a.Read(prefix + "_data")
		if err != nil {
			return nil, err
		}
		if m.data, err = Float64s(raw); err != nil {
			return nil, fmt.Errorf("%s: %s_data: %w", a.name, prefix, err)
		}
		if len(m.data) != len(m.indices) {
			return nil, fmt.Errorf("%s: %s_data has %d values but %s_indices has %d",
				a.name, prefix, len(m.data), prefix, len(m.indices))
		}
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", a.name, prefix, err)
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
	v, err := Int64s(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", a.name, key, err)
	}
	return v, nil
}
