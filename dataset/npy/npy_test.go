package npy

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// rawFile builds a .npy file by hand: the given version, dict text (padded
// NumPy-style to a multiple of 64 bytes) and data bytes.
func rawFile(major byte, dict string, data []byte) []byte {
	pre := 10
	if major > 1 {
		pre = 12
	}
	hlen := len(dict) + 1
	hlen += (64 - (pre+hlen)%64) % 64
	var b bytes.Buffer
	b.WriteString(magic)
	b.Write([]byte{major, 0})
	if major == 1 {
		binary.Write(&b, binary.LittleEndian, uint16(hlen))
	} else {
		binary.Write(&b, binary.LittleEndian, uint32(hlen))
	}
	b.WriteString(dict)
	b.WriteString(strings.Repeat(" ", hlen-len(dict)-1))
	b.WriteByte('\n')
	b.Write(data)
	return b.Bytes()
}

// bytesOf views a supported slice as its bytes (no copy).
func bytesOf(data any) []byte {
	_, b, _ := arrayOf(data)
	return b
}

func TestRoundTrip(t *testing.T) {
	cases := []struct {
		data  any
		shape []int64
	}{
		{[]float32{0, 1.5, -2, 3.25, 4, 5}, []int64{2, 3}},
		{[]float64{1e300, -1}, []int64{2}},
		{[]int32{-1, 0, 1 << 30}, []int64{3}},
		{[]int64{-1 << 40, 7}, []int64{2, 1}},
		{[]uint8{0, 255, 9}, []int64{3}},
		{[]bool{true, false, true}, []int64{3}},
		{[]int16{-300, 300}, []int64{2}},
		{[]uint16{65535}, []int64{1}},
		{[]int8{-128}, []int64{1}},
		{[]uint32{1 << 31}, []int64{1}},
		{[]uint64{1 << 63}, []int64{1}},
		{[]int64{42}, []int64{}}, // scalar
		{[]float32{}, []int64{0, 5}},
	}
	dir := t.TempDir()
	for i, c := range cases {
		var buf bytes.Buffer
		if err := Write(&buf, c.data, c.shape); err != nil {
			t.Fatalf("case %d: Write: %v", i, err)
		}
		if hdr := buf.Len() - len(bytesOf(c.data)); hdr%64 != 0 {
			t.Errorf("case %d: header of %d bytes is not padded to a multiple of 64", i, hdr)
		}
		got, shape, err := Read(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("case %d: Read: %v", i, err)
		}
		check := func(how string, got any, shape []int64) {
			t.Helper()
			if reflect.ValueOf(got).Len() != 0 || reflect.ValueOf(c.data).Len() != 0 {
				if !reflect.DeepEqual(got, c.data) {
					t.Errorf("case %d %s: data %v, want %v", i, how, got, c.data)
				}
			} else if reflect.TypeOf(got) != reflect.TypeOf(c.data) {
				t.Errorf("case %d %s: type %T, want %T", i, how, got, c.data)
			}
			if !reflect.DeepEqual(shape, c.shape) {
				t.Errorf("case %d %s: shape %v, want %v", i, how, shape, c.shape)
			}
		}
		check("Read", got, shape)
		path := filepath.Join(dir, "a.npy")
		if err := WriteFile(path, c.data, c.shape); err != nil {
			t.Fatalf("case %d: WriteFile: %v", i, err)
		}
		got, shape, err = ReadFile(path)
		if err != nil {
			t.Fatalf("case %d: ReadFile: %v", i, err)
		}
		check("ReadFile", got, shape)
		got, shape, closer, err := Map(path)
		if err != nil {
			t.Fatalf("case %d: Map: %v", i, err)
		}
		check("Map", got, shape)
		if err := closer(); err != nil {
			t.Errorf("case %d: closer: %v", i, err)
		}
		if err := closer(); err != nil {
			t.Errorf("case %d: second closer call: %v", i, err)
		}
	}
}

func TestHeaderFormatMatchesNumPy(t *testing.T) {
	// What numpy.save writes for np.zeros((3, 4), "<f4"), header included.
	want := "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }" +
		strings.Repeat(" ", 58) + "\n"
	var buf bytes.Buffer
	if err := Write(&buf, make([]float32, 12), []int64{3, 4}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String()[:128]; got != want {
		t.Errorf("header\n%q\nwant\n%q", got, want)
	}
	h, err := ReadHeader(strings.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	if h.Descr != "<f4" || h.FortranOrder || !reflect.DeepEqual(h.Shape, []int64{3, 4}) || h.DataOffset != 128 {
		t.Errorf("parsed %+v", h)
	}
}

func TestVersions2And3AndVariants(t *testing.T) {
	data := make([]byte, 12)
	binary.LittleEndian.PutUint32(data[8:], 7)
	for _, tc := range []struct {
		major byte
		dict  string
	}{
		{2, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }"},
		{3, `{"shape": (3L,), "fortran_order": False, "descr": "<i4"}`},
		{1, "{'descr':'<i4','fortran_order':True,'shape':(3,)}"}, // 1-D Fortran order is C order
	} {
		got, shape, err := Read(bytes.NewReader(rawFile(tc.major, tc.dict, data)))
		if err != nil {
			t.Fatalf("version %d %s: %v", tc.major, tc.dict, err)
		}
		if !reflect.DeepEqual(got, []int32{0, 0, 7}) || !reflect.DeepEqual(shape, []int64{3}) {
			t.Errorf("version %d: got %v %v", tc.major, got, shape)
		}
	}
}

func TestBigEndianConverted(t *testing.T) {
	data := []byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe}
	file := rawFile(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", data)
	got, _, err := Read(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []int32{1, -2}) {
		t.Errorf("Read: got %v, want [1 -2]", got)
	}
	path := filepath.Join(t.TempDir(), "be.npy")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, closer, err := Map(path)
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	if !reflect.DeepEqual(got, []int32{1, -2}) {
		t.Errorf("Map: got %v, want [1 -2]", got)
	}
}

func TestBadFiles(t *testing.T) {
	f4 := "{'descr': '<f4', 'fortran_order': False, 'shape': (1000, 100), }"
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"truncated.npy", rawFile(1, f4, make([]byte, 1234)),
			"truncated.npy: truncated: header says 1000x100 float32 (400000 bytes) but file has 1234 bytes of data"},
		{"extra.npy", rawFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)),
			"extra.npy: header says 1 float32 (4 bytes) but file has 8 bytes of data (4 extra)"},
		{"fortran.npy", rawFile(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", make([]byte, 16)),
			"fortran.npy: Fortran (column-major) order is not supported for the 2-D shape 2x2"},
		{"magic.npy", []byte("PK\x03\x04 not npy at all"), "magic.npy: not a .npy file: bad magic string"},
		{"short.npy", []byte("\x93NUM"), "short.npy: not a .npy file: file ends inside the preamble"},
		{"version.npy", []byte("\x93NUMPY\x04\x00\x00\x00"), "version.npy: unsupported .npy format version 4.0"},
		{"complex.npy", rawFile(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)),
			`complex.npy: dtype "<c8" is not supported`},
		{"object.npy", rawFile(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)),
			`object.npy: dtype "|O" is not supported`},
		{"half.npy", rawFile(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }", make([]byte, 2)),
			`half.npy: dtype "<f2" is not supported`},
		{"struct.npy", rawFile(1, "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }", make([]byte, 4)),
			"struct.npy: header: structured dtypes are not supported"},
		{"key.npy", rawFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", make([]byte, 4)),
			`key.npy: header: unexpected key "x"`},
		{"missing.npy", rawFile(1, "{'descr': '<f4', 'shape': (1,)}", make([]byte, 4)),
			`missing.npy: header: missing key "fortran_order"`},
		{"negative.npy", rawFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", nil),
			`negative.npy: header: shape: bad dimension "-"`},
		{"overflow.npy", rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", nil),
			"overflow.npy: shape 4294967296x4294967296 has too many elements"},
		{"bool.npy", rawFile(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", []byte{1, 2}),
			"bool.npy: bool array holds byte value 2 (want 0 or 1)"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(dir, c.want)
		if _, _, err := ReadFile(path); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ReadFile %s: error %v, want prefix %q", c.name, err, want)
		}
		if _, _, _, err := Map(path); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Map %s: error %v, want prefix %q", c.name, err, want)
		}
		// A stream cannot tell trailing bytes from what follows the array.
		if _, _, err := Read(bytes.NewReader(c.file)); err == nil && c.name != "extra.npy" {
			t.Errorf("Read %s: no error", c.name)
		}
	}
}

func TestReadTruncatedStream(t *testing.T) {
	// A stream (size unknown) claiming a huge array must fail without
	// allocating it.
	file := rawFile(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", make([]byte, 24))
	_, _, err := Read(bytes.NewReader(file))
	want := "truncated: header says 1000000000000 float64 (8000000000000 bytes) but file has 24 bytes of data"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

func TestWriteErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, []float32{1, 2, 3}, []int64{2, 2}); err == nil ||
		!strings.Contains(err.Error(), "shape 2x2 holds 4 elements but the slice has 3") {
		t.Errorf("shape mismatch: %v", err)
	}
	if err := Write(&buf, []string{"a"}, []int64{1}); err == nil || !strings.Contains(err.Error(), "unsupported slice type []string") {
		t.Errorf("bad type: %v", err)
	}
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, "x.npy"), []int{1}, []int64{1}); err == nil {
		t.Error("WriteFile of []int: no error")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed WriteFile left %d entries behind", len(entries))
	}
}

func TestDescr(t *testing.T) {
	cases := []struct {
		data any
		want string
	}{{[]float32{}, "<f4"}, {[]int64{}, "<i8"}, {[]uint8{}, "|u1"}, {[]bool{}, "|b1"}}
	for _, c := range cases {
		if got, err := Descr(c.data); err != nil || got != c.want {
			t.Errorf("Descr(%T) = %q, %v; want %q", c.data, got, err, c.want)
		}
	}
}
