// Package errcode is the table of the errors an op raises for bad data it
// finds while it runs (an id outside a table, a label past the classes):
// the CUDA kernels write a code and three values into the device's error
// record (report_error, with the codes of kernels/errors.cuh), and the Go
// side turns the record into the op's message, which the CPU twin raises
// too. Both are generated from the op descriptions (backend/ops).
package errcode

import "fmt"

// Code is an error's code, the first word of the device's error record.
type Code int32

// Err is the error of a record: the backend's name, the op, and the
// message formatted from the record's values.
func (c Code) Err(backend string, x, y, z int64) error {
	if op := c.Op(); op != "" {
		return fmt.Errorf("%s: %s: %s", backend, op, c.Message(x, y, z))
	}
	return fmt.Errorf("%s: %s", backend, c.Message(x, y, z))
}

// Op is the op whose error c is, "" for a code not described.
func (c Code) Op() string {
	op, _, _ := c.describe()
	return op
}

// Message formats c's message from the three values of its record.
func (c Code) Message(x, y, z int64) string {
	op, msg, values := c.describe()
	if op == "" {
		return fmt.Sprintf("kernel error %d (%d, %d, %d)", c, x, y, z)
	}
	return fmt.Sprintf(msg, []any{x, y, z}[:values]...)
}
