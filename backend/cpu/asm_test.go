package cpu

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// vectorReg matches an SSE/AVX register operand (X0, Y15, Z31).
var vectorReg = regexp.MustCompile(`\b[XYZ][0-9]{1,2}\b`)

// TestAssemblyIsVEX requires every instruction of the CPU backend's
// assembly that names a vector register to be VEX- or EVEX-encoded (its
// mnemonic starts with V). A legacy SSE instruction (MOVL AX, X0) while the
// Y registers' upper halves are dirty costs a state transition on some
// processors: six a group made Philox's AVX2 loop 24 times slower there.
// Macro invocations (names a #define gives) are skipped; their bodies are
// checked where they are defined.
func TestAssemblyIsVEX(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("*", "*.s"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no assembly found under the CPU backend (%v)", err)
	}
	for _, f := range files {
		checkVEX(t, f)
	}
}

// checkVEX reports each statement of file f whose mnemonic is neither a
// V instruction nor a macro of f and whose operands name a vector register.
func checkVEX(t *testing.T, f string) {
	t.Helper()
	fh, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	macros := map[string]bool{}
	var lines []string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "#define "); ok {
			name = strings.Fields(name)[0]
			name, _, _ = strings.Cut(name, "(")
			macros[name] = true
			line = line[strings.Index(line, name)+len(name):]
			if strings.HasPrefix(line, "(") {
				line = line[strings.Index(line, ")")+1:]
			}
		}
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for i, line := range lines {
		for _, stmt := range strings.Split(strings.ReplaceAll(line, `\`, ";"), ";") {
			fields := strings.Fields(stmt)
			if len(fields) == 0 || strings.HasSuffix(fields[0], ":") || strings.HasPrefix(fields[0], "#") {
				continue
			}
			op, _, _ := strings.Cut(fields[0], "(")
			if strings.HasPrefix(op, "V") || macros[op] || !vectorReg.MatchString(strings.Join(fields[1:], " ")) {
				continue
			}
			t.Errorf("%s:%d: %q names a vector register without VEX encoding (use its V form)", f, i+1, strings.TrimSpace(stmt))
		}
	}
}
