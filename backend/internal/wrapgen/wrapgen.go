// Package wrapgen writes, from one description of each op (backend/ops,
// one YAML file per interface or capability), everything about the op
// that is not its computation:
//
//   - the interface and its methods with their doc comments (package
//     backend, <file>_gen.go);
//   - the argument checks of both backends (backend/cpu and backend/cuda,
//     <file>_gen.go): per op, a struct of the checked, typed views (slices
//     on the CPU; device buffers, count addresses and the Philox key on
//     CUDA) and the method that checks every argument and fills it, so that
//     an op's hand-written method calls it and then only computes; the
//     lines that several ops share (a Group) are checked by one method
//     that their checkers call;
//   - the CUDA launches, each with its parameters in its kernel's order,
//     checked against the kernel's signature in cuda/kernels/*.cu when
//     generated (a launch that passes the wrong number or kind of values
//     is a generation error);
//   - the error codes the kernels report, as a header of named codes
//     (cuda/kernels/errors.cuh) and as package internal/errcode (the op
//     and message of each), so the two sides share one table;
//   - the op methods of the wrappers (record and profile, ops_gen.go):
//     one line each that hands the call to the wrapper's hook; a
//     capability's op reaches the inner backend through a type assertion,
//     safe because AttentionOf and the others check the backend at the
//     bottom of the wrappers.
//
// The description's format is documented on Arg and Binding. Methods with
// results (MaskGraph) and the memory and other capability methods stay
// hand-written. `go generate ./backend` runs ./gen; a test in each package
// with generated files fails when one of them is stale.
package wrapgen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Files returns every generated file, by its path below the backend
// directory (the parent of ops/ and cuda/kernels/).
func Files(backendDir string) (map[string][]byte, error) {
	s, err := Load(filepath.Join(backendDir, "ops"))
	if err != nil {
		return nil, err
	}
	ks, err := ReadKernels(filepath.Join(backendDir, "cuda", "kernels"))
	if err != nil {
		return nil, fmt.Errorf("wrapgen: reading the kernels: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range s.Files {
		pkgs := []string{"cuda"}
		if f.Interface != "" {
			src, err := f.InterfaceSource()
			if err != nil {
				return nil, err
			}
			out[f.Name+"_gen.go"] = src
			pkgs = []string{"cpu", "cuda"}
		}
		if len(f.Ops) == 0 && len(f.Kernels) == 0 {
			continue
		}
		for _, pkg := range pkgs {
			src, err := s.Checks(pkg, f, ks)
			if err != nil {
				return nil, err
			}
			out[pkg+"/"+f.Name+"_gen.go"] = src
		}
	}
	for _, pkg := range []string{"record", "profile"} {
		src, err := s.Wrapper(pkg)
		if err != nil {
			return nil, err
		}
		out[pkg+"/"+wrapperFile] = src
	}
	src, err := s.ErrcodeGo()
	if err != nil {
		return nil, err
	}
	out["internal/errcode/codes_gen.go"] = src
	out["cuda/kernels/errors.cuh"] = s.ErrcodeHeader()
	return out, nil
}

// Write writes every generated file below backendDir and removes the
// generated Go files no description writes any more.
func Write(backendDir string) error {
	files, err := Files(backendDir)
	if err != nil {
		return err
	}
	for p, src := range files {
		if err := os.WriteFile(filepath.Join(backendDir, p), src, 0o644); err != nil {
			return err
		}
	}
	for _, dir := range dirs(files) {
		old, err := orphans(backendDir, dir, files)
		if err != nil {
			return err
		}
		for _, p := range old {
			if err := os.Remove(filepath.Join(backendDir, p)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Stale compares the generated files of one directory below backendDir
// (pkg: "" for package backend, "cpu", "cuda/kernels", ...) with what the
// descriptions generate now: an error per file that differs, is missing,
// or is generated but no longer described.
func Stale(backendDir, pkg string) (map[string]error, error) {
	files, err := Files(backendDir)
	if err != nil {
		return nil, err
	}
	out := map[string]error{}
	for p, want := range files {
		if filepath.Dir(p) != filepath.Clean("./"+pkg) {
			continue
		}
		got, err := os.ReadFile(filepath.Join(backendDir, p))
		switch {
		case err != nil:
			out[p] = fmt.Errorf("%s: %v: run go generate ./backend", p, err)
		case !bytes.Equal(got, want):
			out[p] = fmt.Errorf("%s is stale: run go generate ./backend", p)
		default:
			out[p] = nil
		}
	}
	old, err := orphans(backendDir, pkg, files)
	if err != nil {
		return nil, err
	}
	for _, p := range old {
		out[p] = fmt.Errorf("%s is generated from a description that is gone: run go generate ./backend", p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("wrapgen: nothing is generated into %q", pkg)
	}
	return out, nil
}

// dirs are the directories the files are in.
func dirs(files map[string][]byte) []string {
	seen := map[string]bool{}
	var out []string
	for p := range files {
		d := filepath.Dir(p)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// orphans are the Go files of dir that say the generator wrote them but
// that it does not write now.
func orphans(backendDir, dir string, files map[string][]byte) ([]string, error) {
	names, err := filepath.Glob(filepath.Join(backendDir, dir, "*_gen.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		rel, err := filepath.Rel(backendDir, n)
		if err != nil {
			return nil, err
		}
		if _, ok := files[rel]; ok {
			continue
		}
		src, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(string(src), "// Code generated by backend/internal/wrapgen") {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out, nil
}
