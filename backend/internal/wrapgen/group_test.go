package wrapgen

import (
	"path/filepath"
	"strings"
	"testing"
)

// groupOps describes two ops that share a group of lines.
const groupOps = demoCapability + `doc: |
  Demo is a capability of two ops.
groups:
  - name: rows
    doc: |
      The rows an op reads.
    args:
      - x F32 [n.Cap*dim]
      - n Count
      - dim int >0
ops:
  - name: Scale
    doc: |
      Scale writes y = alpha·x on rows [:n].
    args:
      - use rows
      - alpha float32 not-nan
      - key int32
      - y F32 [n.Cap*dim]
    cuda:
      - scale(x, n, n.Cap, dim, alpha, key:u32, y, err)
  - name: Shift
    doc: |
      Shift writes y = x + alpha on rows [:n].
    args:
      - alpha float32
      - use rows
      - y F32 [n.Cap*dim] nil-ok
`

// groupRows is the group's lines as an op would write them out.
const groupRows = "      - x F32 [n.Cap*dim]\n      - n Count\n      - dim int >0\n"

// TestGroupIsWrittenOut: an op that uses a group has the signature, the
// wrappers and the order of checks of the same op with the group's lines
// written out, and each backend checks the group once, in a method the
// ops' checkers call, whose views their structs embed.
func TestGroupIsWrittenOut(t *testing.T) {
	grouped, err := Files(writeDemo(t, groupOps))
	if err != nil {
		t.Fatal(err)
	}
	outDir := writeDemo(t, writtenOut(groupOps))
	out, err := Files(outDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"demo_gen.go", "record/ops_gen.go", "profile/ops_gen.go"} {
		if string(grouped[name]) != string(out[name]) {
			t.Errorf("%s differs with the group written out:\n%s\nwant\n%s", name, grouped[name], out[name])
		}
	}
	for path, wants := range map[string][]string{
		"cpu/demo_gen.go": {
			"func (c *call) checkRows(x backend.Buffer, n backend.Count, dim int) (ck rowsArgs) {\n" +
				"\tck.n, ck.nP = c.count(\"n\", n)\n\tc.check(backend.CheckDim(\"dim\", dim))\n\tck.x = c.f32(\"x\", x, n.Cap*dim)\n\treturn ck\n}",
			"type scaleArgs struct {\n\trowsArgs\n",
			"c = b.begin(\"Scale\")\n\tck.rowsArgs = c.checkRows(x, n, dim)\n\tc.check(backend.CheckNumber(\"alpha\", alpha))\n",
			"c = b.begin(\"Shift\")\n\tck.rowsArgs = c.checkRows(x, n, dim)\n\tif !isNil(y) {\n",
		},
		"cuda/demo_gen.go": {
			"ck.rowsArgs = c.checkRows(x, n, dim)\n",
			"c.args().ptr(a.x.addr()).ptr(a.nP).i32(a.n.Cap).i32(a.dim).f32(a.alpha)",
		},
	} {
		src := string(grouped[path])
		for _, w := range wants {
			if !strings.Contains(src, w) {
				t.Errorf("%s lacks\n%s\nin\n%s", path, w, src)
			}
		}
	}
	a, err := Load(filepath.Join(writeDemo(t, groupOps), "ops"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(filepath.Join(outDir, "ops"))
	if err != nil {
		t.Fatal(err)
	}
	for i, op := range a.Ops() {
		if got, want := checkOrder(op), checkOrder(b.Ops()[i]); got != want {
			t.Errorf("%s checks %s, written out %s", op.Name, got, want)
		}
	}
}

// writtenOut is a description with its groups' lines written out in the
// ops that use them (one group, rows).
func writtenOut(ops string) string {
	groups, rest, _ := strings.Cut(ops, "groups:\n")
	_, rest, _ = strings.Cut(rest, "ops:\n")
	return strings.ReplaceAll(groups+"ops:\n"+rest, "      - use rows\n", groupRows)
}

// checkOrder names op's checks in the order they are made.
func checkOrder(op *Op) string {
	var names []string
	for _, a := range op.checks {
		names = append(names, a.describe())
	}
	return strings.Join(names, " ")
}

// TestBadGroups: a group that reads another parameter than its own, one
// that no op uses, an unknown group, and a group whose lines an op's line
// would split are description errors.
func TestBadGroups(t *testing.T) {
	for _, tc := range []struct {
		edits [][2]string // from, to: each replaced once
		want  string
	}{
		{[][2]string{
			{"      - n Count\n      - dim int >0\nops:", "      - n Count\nops:"},
			{"      - use rows\n      - alpha float32 not-nan", "      - dim int >0\n      - use rows\n      - alpha float32 not-nan"},
			{"      - alpha float32\n      - use rows", "      - alpha float32\n      - dim int >0\n      - use rows"},
		}, "group rows: x refers to dim"},
		{[][2]string{{"      - use rows\n      - alpha float32 not-nan", "      - use lines\n      - alpha float32 not-nan"}},
			"use lines: no such group"},
		{[][2]string{{"groups:\n", "groups:\n  - name: spare\n    doc: |\n      Unused.\n    args:\n      - z int\n"}},
			"group spare is used by no op"},
		{[][2]string{{"      - use rows\n      - y F32 [n.Cap*dim] nil-ok", "      - y F32 [dim] nil-ok\n      - use rows"}},
			"the lines of group rows are not checked together"},
	} {
		ops := groupOps
		for _, e := range tc.edits {
			if !strings.Contains(ops, e[0]) {
				t.Fatalf("the description lacks %q", e[0])
			}
			ops = strings.Replace(ops, e[0], e[1], 1)
		}
		if _, err := Files(writeDemo(t, ops)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one saying %q", err, tc.want)
		}
	}
}
