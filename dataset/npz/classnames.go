package npz

import (
	"fmt"

	"github.com/fanout-gnn/fanout/dataset"
	"github.com/fanout-gnn/fanout/dataset/npy"
)

// ClassNamesKey is the archive member that names the classes, one string
// per class id (gnn-benchmark's class_names).
const ClassNamesKey = "class_names"

// namedClasses checks labels against the archive's class_names, when it
// has one: the class count is the number of names, and a label beyond them
// is an error (not a dataset with more classes than the archive names).
// Without class_names, classes is returned as it is.
func namedClasses(a *Archive, labels []int32, classes int) (int, error) {
	if !a.Has(ClassNamesKey) {
		return classes, nil
	}
	shape, err := a.Shape(ClassNamesKey)
	if err != nil {
		return 0, err
	}
	if len(shape) != 1 || shape[0] < 1 || shape[0] > dataset.MaxClasses {
		return 0, fmt.Errorf("%s: %s has shape %s, want (classes,) with 1 to %d classes", a.name, ClassNamesKey, npy.ShapeString(shape), dataset.MaxClasses)
	}
	named := shape[0]
	for v, c := range labels {
		if int64(c) >= named {
			return 0, fmt.Errorf("%s: vertex %d has label %d, beyond %s, which names %d classes (labels 0 to %d)",
				a.name, v, c, ClassNamesKey, named, named-1)
		}
	}
	return int(named), nil
}
