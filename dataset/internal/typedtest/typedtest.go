// Package typedtest holds what the tests of typed datasets' importers and
// generators share.
package typedtest

import "github.com/fanout-gnn/fanout/dataset"

// RelationNames lists d's relations as dataset.RelationName names them,
// "(src, rel, dst)", in d's order.
func RelationNames(d *dataset.Dataset) []string {
	var names []string
	for _, r := range d.Relations {
		names = append(names, d.RelationName(r))
	}
	return names
}
