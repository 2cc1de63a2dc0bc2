package main

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
)

// TestVersion: the version names the Go version and every GPU library,
// found or not, and never fails for a missing one.
func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"version"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"fanout ", "commit ", runtime.Version(), "libcuda", "libnvrtc", "libcublas", "libnccl"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("version output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestEveryCommandHelp: -h of every subcommand exits 0 and shows its flags
// (or says it has none).
func TestEveryCommandHelp(t *testing.T) {
	for _, c := range commands() {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{c.name, "-h"}, &out, &errb)
		text := errb.String() + out.String()
		if code != 0 {
			t.Errorf("%s -h: exit %d", c.name, code)
		}
		if !strings.Contains(text, "\n  -") && !strings.Contains(text, "(no flags)") {
			t.Errorf("%s -h shows no flags:\n%s", c.name, text)
		}
		if len(strings.TrimSpace(text)) < 20 {
			t.Errorf("%s -h is nearly empty: %q", c.name, text)
		}
	}
}
