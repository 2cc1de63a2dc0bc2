package cpu

import (
	"fmt"

	"github.com/fanout-gnn/fanout/backend"
)

var _ backend.HostCopier = (*Backend)(nil)

// CopyIn copies n elements of src from srcOff into dst from dstOff
// (backend.HostCopier: host memory and the backend's are one here). It
// takes no lock of the backend's: the caller keeps ops off dst's elements
// meanwhile.
func (b *Backend) CopyIn(dst backend.Buffer, dstOff int, src backend.Buffer, srcOff, n int) error {
	d, okD := dst.(*buffer)
	s, okS := src.(*buffer)
	switch {
	case !okD || d == nil:
		return fmt.Errorf("cpu: CopyIn: destination %s", describeForeign(dst))
	case !okS || s == nil:
		return fmt.Errorf("cpu: CopyIn: source %s", describeForeign(src))
	case d.dt != s.dt:
		return fmt.Errorf("cpu: CopyIn: %v elements into a buffer of %v", s.dt, d.dt)
	case n < 0 || srcOff < 0 || dstOff < 0 || srcOff+n > s.Len() || dstOff+n > d.Len():
		return fmt.Errorf("cpu: CopyIn: %d elements from %d of %d into %d of %d", n, srcOff, s.Len(), dstOff, d.Len())
	}
	switch d.dt {
	case backend.F32:
		copy(d.f32[dstOff:dstOff+n], s.f32[srcOff:])
	case backend.I32:
		copy(d.i32[dstOff:dstOff+n], s.i32[srcOff:])
	case backend.I64:
		copy(d.i64[dstOff:dstOff+n], s.i64[srcOff:])
	case backend.U8:
		copy(d.u8[dstOff:dstOff+n], s.u8[srcOff:])
	case backend.BF16:
		copy(d.u16[dstOff:dstOff+n], s.u16[srcOff:])
	}
	return nil
}
