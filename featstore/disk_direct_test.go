package featstore

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/fanout-gnn/fanout/backend"
	"github.com/fanout-gnn/fanout/backend/cpu"
)

// npyLikeFile is a DirectFile over a file on disk whose rows start after
// a header of offset bytes, as feat.npy's do.
type npyLikeFile struct {
	f        *os.File
	offset   int64
	rowBytes int64
}

func (n *npyLikeFile) RowBytes() int64                  { return n.rowBytes }
func (n *npyLikeFile) Location() (path string, _ int64) { return n.f.Name(), n.offset }
func (n *npyLikeFile) ReadRows(p []byte, first int64) error {
	_, err := n.f.ReadAt(p, n.offset+first*n.rowBytes)
	if errors.Is(err, io.EOF) {
		return errors.New("truncated")
	}
	return err
}

// writeRows writes mem's rows after a header of offset bytes into a file
// of dir and opens it.
func writeRows(t *testing.T, dir string, mem *memFile, offset int64) *npyLikeFile {
	t.Helper()
	path := filepath.Join(dir, "feat.npy")
	data := append(make([]byte, offset), mem.data...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &npyLikeFile{f: f, offset: offset, rowBytes: mem.rowBytes}
}

// directDir is a directory whose file system takes O_DIRECT: the test's
// temporary directory, or one made in the package's directory; the test
// is skipped where neither does.
func directDir(t *testing.T) string {
	t.Helper()
	for _, dir := range []string{t.TempDir(), ""} {
		if dir == "" {
			d, err := os.MkdirTemp(".", "direct-test-")
			if err != nil {
				continue
			}
			t.Cleanup(func() { os.RemoveAll(d) })
			dir = d
		}
		probe := filepath.Join(dir, "probe")
		if err := os.WriteFile(probe, make([]byte, blockSize), 0o644); err != nil {
			continue
		}
		if fd, err := openDirect(probe); err == nil {
			closeDirect(fd)
			return dir
		}
	}
	t.Skip("neither the temporary directory nor the package's takes O_DIRECT (tmpfs, or not Linux)")
	return ""
}

// TestDiskDirectEqualsBuffered: reading with O_DIRECT (rows of 148 and
// 74 bytes after a header of 3000 bytes, so that rows straddle 4 KiB
// blocks and share them, and the file ends inside a block) gives the
// rows reads through the page cache give, bit for bit, in the cache, the
// host tier and the gathers' disk rows; the store reads directly to the
// end (no fall back, nothing on the log).
func TestDiskDirectEqualsBuffered(t *testing.T) {
	const rows, dim = 500, 37
	dir := directDir(t)
	f32, bits, _, ids := tables(rows, dim)
	order := strided(rows, 13)
	for _, feat := range []any{f32, bits} {
		mem := fileOf(feat, dim)
		file := writeRows(t, dir, mem, 3000)
		ft := backend.F32
		if _, ok := feat.([]uint16); ok {
			ft = backend.BF16
		}
		for _, tc := range [][2]int{{0, 0}, {60, 100}, {60, rows}} {
			name := fmt.Sprintf("%s file, cache %d, host %d", ft, tc[0], tc[1])
			var log strings.Builder
			direct, still := gatherDisk(t, DiskConfig{File: file, FileType: ft, HostRows: int64(tc[1]), Readers: 3, Direct: true, Log: &log}, order, tc[0], ids, nil)
			buffered, _ := gatherDisk(t, DiskConfig{File: mem, FileType: ft, HostRows: int64(tc[1]), Readers: 3}, order, tc[0], ids, nil)
			if !still || log.Len() > 0 || !sameBits(direct, buffered) {
				t.Fatalf("%s: direct reads (still direct %t) differ from buffered ones (log %q)", name, still, log.String())
			}
		}
	}
}

// TestDiskDirectFallsBack: a direct read refused with EINVAL (as a file
// system that takes the open but not the read refuses it) turns the store
// to reads through the page cache, said once on the log, and the rows
// are those of buffered reads; a file that cannot say where its rows lie
// is read through the page cache from the start, said on the log; another
// failure of a direct read is the gather's error, not a fall back.
func TestDiskDirectFallsBack(t *testing.T) {
	const rows, dim = 200, 9
	f32, _, _, ids := tables(rows, dim)
	order := strided(rows, -1)
	mem := fileOf(f32, dim)
	file := writeRows(t, t.TempDir(), mem, 128)
	want, _ := gatherDisk(t, DiskConfig{File: mem, FileType: backend.F32, Readers: 2}, order, 20, ids, nil)
	for _, c := range []struct {
		name   string
		file   RowFile
		refuse bool
		log    string
	}{
		{"a refused read", file, true, "reading rows through the page cache: " + file.f.Name() + ": reading rows"},
		{"no location", mem, false, "does not say where they lie"},
	} {
		var log strings.Builder
		cfg := DiskConfig{File: c.file, FileType: backend.F32, Readers: 2, Direct: true, Log: &log}
		got, still := gatherDisk(t, cfg, order, 20, ids, func(d *Disk) {
			if c.refuse {
				refuseDirect(d, file, syscall.EINVAL)
			}
		})
		if still || !sameBits(got, want) || strings.Count(log.String(), "\n") != 1 || !strings.Contains(log.String(), c.log) {
			t.Errorf("%s: still direct %t, rows equal %t, log %q, want one line with %q", c.name, still, sameBits(got, want), log.String(), c.log)
		}
	}
	be := cpu.New(1)
	d, err := NewDisk(be, DiskConfig{File: file, FileType: backend.F32, Readers: 2}, rows, dim, order, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free()
	refuseDirect(d, file, syscall.EIO)
	d.Reserve(len(ids))
	if err := d.Fill(10); err == nil || !strings.Contains(err.Error(), "with O_DIRECT") || !d.Direct() {
		t.Errorf("a failed direct read: %v (direct %t)", err, d.Direct())
	}
}

// refuseDirect makes d read file with O_DIRECT through reads that all
// fail with errno.
func refuseDirect(d *Disk, file *npyLikeFile, errno syscall.Errno) {
	if d.dio != nil {
		d.dio.close()
	}
	d.dio = &directFile{path: file.f.Name(), offset: file.offset, fd: -1, pread: func(int, []byte, int64) (int, error) { return 0, errno }}
}

// gatherDisk makes a disk store of cfg (before its Fill, set runs on it),
// fills it with cached rows, and gathers ids twice through Gather (the
// second time after the first gather's disk rows were read), returning
// both gathers' rows and whether the store still reads with O_DIRECT.
func gatherDisk(t *testing.T, cfg DiskConfig, order []int32, cached int, ids []int32, set func(*Disk)) ([]float32, bool) {
	t.Helper()
	be := cpu.New(2)
	dim := int(cfg.File.RowBytes()) / cfg.FileType.Size()
	d, err := NewDisk(be, cfg, int64(len(order)), dim, order, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free()
	if set != nil {
		set(d)
	}
	d.Reserve(len(ids))
	if err := d.Fill(cached); err != nil {
		t.Fatal(err)
	}
	out := gatherAll(t, be, d, ids)
	out = append(out, gatherAll(t, be, d, ids)...)
	if _, _, err := d.Stats(); err != nil {
		t.Fatal(err)
	}
	return out, d.Direct()
}

// sameBits reports whether a and b hold the same bits.
func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestDiskDirectReadsThroughGaps: a host tier of every other row of 8 KiB
// (gaps of two blocks) loads in stretches, each read taking its rows and
// the gaps between them up to a reader's span, not a read a row (1,024
// before); the gathered rows, of both tiers, are the table's.
func TestDiskDirectReadsThroughGaps(t *testing.T) {
	const rows, dim = 2048, 2048
	dir := directDir(t)
	feat, _ := randomTable(rows, dim)
	file := writeRows(t, dir, fileOf(feat, dim), 0)
	order := make([]int32, 0, rows)
	for _, first := range []int{1, 0} {
		for v := first; v < rows; v += 2 {
			order = append(order, int32(v))
		}
	}
	be := cpu.New(2)
	d, err := NewDisk(be, DiskConfig{File: file, FileType: backend.F32, HostRows: rows / 2, Readers: 4, Direct: true}, rows, dim, order, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free()
	var reads atomic.Int64
	pread := d.dio.pread
	d.dio.pread = func(fd int, p []byte, off int64) (int, error) {
		reads.Add(1)
		return pread(fd, p, off)
	}
	ids := []int32{1, 3, 2047, 0, 2, 1000}
	d.Reserve(len(ids))
	if err := d.Fill(0); err != nil {
		t.Fatal(err)
	}
	// 512 KiB spans of 64 file rows, 32 of the tier's each, and a span cut
	// at each of the 4 readers' shares.
	if n := reads.Load(); n > rows/2/32+8 {
		t.Errorf("Fill read the file %d times, want at most %d", n, rows/2/32+8)
	}
	if got := gatherAll(t, be, d, ids); !slices.Equal(got, rowsOf(feat, dim, ids)) || !d.Direct() {
		t.Errorf("the gathered rows differ from the table's (direct %t)", d.Direct())
	}
}
