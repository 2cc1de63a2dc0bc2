package graphbolt

import "github.com/fanout-gnn/fanout/dataset"

// ImportText imports a dataset whose metadata.yaml holds text and whose
// files are in dir, for the fuzz target: no metadata file is written.
func ImportText(dir string, text []byte, o Options) (*dataset.Dataset, error) {
	m, err := parseMetadata(text)
	if err != nil {
		return nil, err
	}
	return importMetadata(dir, m, o)
}
