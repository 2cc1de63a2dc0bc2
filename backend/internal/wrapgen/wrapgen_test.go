package wrapgen

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// demoKernels is a kernel source in the forms the real ones use: a plain
// signature, an object-like macro of parameters, and a function-like macro
// that declares a family of kernels.
const demoKernels = `#include "common.cuh"
#define DEMO_ARGS const int *nP, int cap, \
    int dim
// scale: one thread per element.
extern "C" __global__ void scale(const float* x, DEMO_ARGS, float alpha, u32 key, float* y, int* err) {}
#define FAM(V, SUF) \
    extern "C" __global__ void __launch_bounds__(256) fam_##SUF(const V* x, DEMO_ARGS, V* y) {}
FAM(float4, v4)
FAM(float, v1)
`

// demoCapability begins the demo descriptions: a capability, Demo.
const demoCapability = `interface: Demo
capability: true
what: the demo ops (backend.Demo)
`

// demoOps describes one op of a capability over the kernels above.
const demoOps = demoCapability + `doc: |
  Demo is a capability of one op.
ops:
  - name: Scale
    doc: |
      Scale writes y = alpha·x on rows [:n].
    args:
      - x F32 [n.Cap*dim]
      - n Count
      - dim int >0
      - alpha float32 not-nan
      - key int32
      - y F32 [n.Cap*dim]
      - 'require y.Len() >= x.Len() else "y: %d elements, x %d", y.Len(), x.Len()'
    errors:
      - {name: DEMO_ROW, code: 40, message: "row %[2]d of %[1]d"}
    cuda:
      - scale(x, n, n.Cap, dim, alpha, key:u32, y, err)
      - fam = fam_*(x, n, n.Cap, $words:i32, y)
`

// writeDemo writes a backend directory of the demo description and
// kernels, with ops replacing the description when set.
func writeDemo(t *testing.T, ops string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"ops/demo.yaml":              ops,
		"cuda/kernels/demo.cu":       demoKernels,
		"cuda/kernels/common.cuh":    "typedef unsigned int u32;\n",
		"cuda/kernels/unrelated.cuh": "#define OTHER 1\n",
	}
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestReadKernels: signatures are read through parameter macros and
// kernel-declaring macros (## pasted, __launch_bounds__ skipped), and
// each parameter gets the kind a launch must pass.
func TestReadKernels(t *testing.T) {
	dir := writeDemo(t, demoOps)
	ks, err := ReadKernels(filepath.Join(dir, "cuda", "kernels"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"scale":  "ptr ptr i32 i32 f32 u32 ptr ptr",
		"fam_v4": "ptr ptr i32 i32 ptr",
		"fam_v1": "ptr ptr i32 i32 ptr",
	}
	if len(ks) != len(want) {
		t.Errorf("read %d kernels, want %d", len(ks), len(want))
	}
	for name, params := range want {
		k, ok := ks[name]
		if !ok {
			t.Errorf("kernel %s not read", name)
			continue
		}
		if got := strings.Join(k.Params, " "); got != params {
			t.Errorf("%s: parameters %s, want %s", name, got, params)
		}
	}
}

// TestGenerateDemo: the files of a description hold the interface with
// its doc and capability function, each backend's checker in the order of
// the args, the launches in the kernels' order, and the codes.
func TestGenerateDemo(t *testing.T) {
	files, err := Files(writeDemo(t, demoOps))
	if err != nil {
		t.Fatal(err)
	}
	for path, wants := range map[string][]string{
		"demo_gen.go": {
			"// Demo is a capability of one op.\ntype Demo interface {",
			"\t// Scale writes y = alpha·x on rows [:n].\n\tScale(x Buffer, n Count, dim int, alpha float32, key int32, y Buffer)\n",
			`func DemoOf(be Backend) (Demo, error) {`,
		},
		"cpu/demo_gen.go": {
			"func (b *Backend) checkScale(x backend.Buffer, n backend.Count, dim int, alpha float32, key int32, y backend.Buffer) (c call, ck scaleArgs) {\n\tc = b.begin(\"Scale\")\n",
			"ck.n, ck.nP = c.count(\"n\", n)\n\tc.check(backend.CheckDim(\"dim\", dim))\n\tck.x = c.f32(\"x\", x, n.Cap*dim)\n\tc.check(backend.CheckNumber(\"alpha\", alpha))\n\tck.y = c.f32(\"y\", y, n.Cap*dim)\n",
			"if c.ok && !(y.Len() >= x.Len()) {\n\t\tc.failf(\"y: %d elements, x %d\", y.Len(), x.Len())",
		},
		"cuda/demo_gen.go": {
			"c.args().ptr(a.x.addr()).ptr(a.nP).i32(a.n.Cap).i32(a.dim).f32(a.alpha).u32(uint32(a.key)).ptr(a.y.addr()).\n\t\tptr(c.b.errDev)\n\tc.launch(\"scale\", grid, block, smem)",
			"func (c *call) launchFam(a *scaleArgs, name string, words int, grid, block dim3, smem int) {",
		},
		"internal/errcode/codes_gen.go": {
			"DemoRow Code = 40",
			`return "Scale", "row %[2]d of %[1]d", 2`,
		},
		"cuda/kernels/errors.cuh": {"#define ERR_DEMO_ROW 40  // Scale: row {b} of {a}\n"},
		"record/ops_gen.go":       {"b.do(func() { b.inner.(backend.Demo).Scale(x, n, dim, alpha, key, y) })"},
		"profile/ops_gen.go":      {`b.op("Scale", func() { b.inner.(backend.Demo).Scale(x, n, dim, alpha, key, y) })`},
	} {
		src, ok := files[path]
		if !ok {
			t.Errorf("%s not generated", path)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(string(src), w) {
				t.Errorf("%s lacks\n%s\nin\n%s", path, w, src)
			}
		}
	}
}

// TestBindingMismatch: a launch that does not pass its kernel's
// parameters (too few, a kind swapped, a kernel that does not exist) is a
// generation error naming the kernel and the parameter.
func TestBindingMismatch(t *testing.T) {
	for _, tc := range []struct{ launch, want string }{
		{"scale(x, n, n.Cap, dim, alpha, key:u32, y)", "takes 8 parameters, the launch passes 7"},
		{"scale(x, n, dim, n.Cap, alpha, key, y, err)", "parameter 6 is u32, the launch passes i32 (key)"},
		{"scale(n, x, n.Cap, dim, alpha, key:u32, y, err)", ""}, // two pointers swapped: the kinds agree
		{"scale(x, n, n.Cap, dim, dim, key:u32, y, err)", "parameter 5 is f32, the launch passes i32 (dim)"},
		{"scales(x, n, n.Cap, dim, alpha, key:u32, y, err)", "no kernel scales"},
		{"fam = fam_*(x, n, n.Cap, y)", "kernel fam_v1 (demo.cu) takes 5 parameters, the launch passes 4"},
		{"scale(x, n, n.Cap, dim, alpha, key:u32, y, q)", "no parameter q"},
	} {
		ops := strings.Replace(demoOps, "      - scale(x, n, n.Cap, dim, alpha, key:u32, y, err)\n      - fam = fam_*(x, n, n.Cap, $words:i32, y)\n",
			"      - "+tc.launch+"\n", 1)
		_, err := Files(writeDemo(t, ops))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.launch, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.launch, err, tc.want)
		}
	}
}

// TestBadDescriptions: descriptions that cannot be right are errors that
// name the op and the line.
func TestBadDescriptions(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"- dim int >0", "- dim int >1", `unknown modifier ">1"`},
		{"- dim int >0", "- dim Tensor", "unknown type Tensor"},
		{"- x F32 [n.Cap*dim]", "- x F32 [n.Cap*dim", "unclosed shape"},
		{"- x F32 [n.Cap*dim]", "- x F32 [n.Cap*(dim]", "shape"},
		{"- key int32", "- key int32 nil-ok", "nil-ok on a int32"},
		{"- key int32", "- y.Len int", "a field of y, which is not an earlier parameter"},
		{"code: 40", "code: 0", "want a positive code"},
		{`message: "row %[2]d of %[1]d"`, `message: "row %s"`, "only %d and %[1..3]d"},
		{"- x F32 [n.Cap*dim]", "- x F32 [y.Len()]", "depend on each other in a cycle"},
		{"- key int32", "- key int32\n      - key int32 if dim > 1", "listed twice"},
		{"capability: true\n", "capability: true\nsurprise: 1\n", "field surprise not found"},
	} {
		if !strings.Contains(demoOps, tc.from) {
			t.Fatalf("the demo has no %q", tc.from)
		}
		ops := strings.Replace(demoOps, tc.from, tc.to, 1)
		if strings.Contains(tc.to, "y.Len()") { // and y's shape on x: a cycle
			ops = strings.Replace(ops, "- y F32 [n.Cap*dim]", "- y F32 [x.Len()]", 1)
		}
		_, err := Files(writeDemo(t, ops))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.to, err, tc.want)
		}
	}
}

// TestCheckOrder: a check waits for the parameters its shape, condition
// or type needs, and guards expressions that dereference a buffer behind
// the checks before it; otherwise the args' order holds.
func TestCheckOrder(t *testing.T) {
	s, err := Load("../../ops")
	if err != nil {
		t.Fatal(err)
	}
	var tiered *Op
	for _, op := range s.Ops() {
		if op.Name == "GatherTiered" {
			tiered = op
		}
	}
	if tiered == nil {
		t.Fatal("no GatherTiered")
	}
	var order []string
	for _, a := range tiered.checks {
		order = append(order, a.Name)
	}
	at := func(name string) int {
		for i, n := range order {
			if n == name {
				return i
			}
		}
		t.Fatalf("%s not checked", name)
		return -1
	}
	// cache's type is host's, and slot is as long as host's rows.
	if at("cache") < at("host") || at("slot") < at("host") || at("slot") < at("dim") {
		t.Errorf("GatherTiered checks %v: cache and slot must come after host and dim", order)
	}
	if at("ids") > at("out") {
		t.Errorf("GatherTiered checks %v: ids before out, as written", order)
	}
	var b bytes.Buffer
	if err := tiered.checker(&b, "cpu"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.ReplaceAll(b.String(), " ", ""), "ifc.ok{\nck.slot=c.i32(\"slot\",slot,host.Len()/dim)") {
		t.Errorf("slot's shape reads host without waiting for its check:\n%s", b.String())
	}
}

// TestKernelsUseNamedCodes: every kernel reports its errors by the
// generated names (no bare numbers), and each code of the table is
// reported by a kernel.
func TestKernelsUseNamedCodes(t *testing.T) {
	s, err := Load("../../ops")
	if err != nil {
		t.Fatal(err)
	}
	units, err := filepath.Glob("../../cuda/kernels/*.cu")
	if err != nil || len(units) == 0 {
		t.Fatalf("no kernel sources: %v", err)
	}
	var all strings.Builder
	for _, u := range units {
		src, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(src)
		for _, m := range regexp.MustCompile(`report_error\(\s*[^,]+,\s*([^,]+),`).FindAllStringSubmatch(string(src), -1) {
			if !strings.HasPrefix(strings.TrimSpace(m[1]), "ERR_") {
				t.Errorf("%s reports code %s: use a name of errors.cuh", filepath.Base(u), m[1])
			}
		}
		if regexp.MustCompile(`(?m)^\s*#define\s+ERR_`).MatchString(string(src)) {
			t.Errorf("%s defines an error code: describe it in backend/ops instead", filepath.Base(u))
		}
	}
	for _, e := range s.codes() {
		if !strings.Contains(all.String(), "ERR_"+e.Name) {
			t.Errorf("code %s (%s) is reported by no kernel", e.Name, e.Op)
		}
	}
}

// TestEmbeddedInCapability: the ops of an interface that is not a
// capability, embedded by one, are reached through that capability in the
// wrappers, and the capability's interface embeds it.
func TestEmbeddedInCapability(t *testing.T) {
	dir := writeDemo(t, strings.Replace(demoOps, "what:", "embeds: [DemoPart]\nwhat:", 1))
	part := `interface: DemoPart
doc: |
  DemoPart is a part of Demo.
ops:
  - name: Half
    doc: |
      Half writes y = alpha·x on rows [:n].
    args:
      - x F32 [n.Cap*dim]
      - n Count
      - dim int >0
      - alpha float32 not-nan
      - key int32
      - y F32 [n.Cap*dim]
    cuda:
      - scale(x, n, n.Cap, dim, alpha, key:u32, y, err)
`
	if err := os.WriteFile(filepath.Join(dir, "ops/demo_part.yaml"), []byte(part), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"demo_gen.go":        "\tDemoPart\n}",
		"record/ops_gen.go":  "b.do(func() { b.inner.(backend.Demo).Half(x, n, dim, alpha, key, y) })",
		"profile/ops_gen.go": `b.op("Half", func() { b.inner.(backend.Demo).Half(x, n, dim, alpha, key, y) })`,
	} {
		if !strings.Contains(string(files[path]), want) {
			t.Errorf("%s lacks\n%s\nin\n%s", path, want, files[path])
		}
	}
}
