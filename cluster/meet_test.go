package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDevicesPerHost(t *testing.T) {
	if err := (&Launch{LocalRank: 1, LocalWorldSize: 2}).CheckDevicesPerHost(2); err != nil {
		t.Errorf("two processes, two GPUs: %v", err)
	}
	err := (&Launch{LocalRank: 1, LocalWorldSize: 2}).CheckDevicesPerHost(1)
	if err == nil || !strings.Contains(err.Error(), "2 processes on this host but 1 GPU(s)") {
		t.Errorf("two processes sharing one GPU: %v", err)
	}
	if err := (&Launch{LocalRank: 3}).CheckDevicesPerHost(2); err == nil {
		t.Error("local rank 3 with 2 GPUs: no error")
	}
}

func TestJobToken(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if _, err := Token(get); err == nil || !strings.Contains(err.Error(), "FANOUT_TOKEN") {
		t.Errorf("no token: %v", err)
	}
	env["FANOUT_TOKEN"] = " s3cret "
	if tok, err := Token(get); err != nil || tok != "s3cret" {
		t.Errorf("token %q, %v", tok, err)
	}
	delete(env, "FANOUT_TOKEN")
	f := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(f, []byte("from-file\nrest"), 0o600)
	env["FANOUT_TOKEN_FILE"] = f
	if tok, err := Token(get); err != nil || tok != "from-file" {
		t.Errorf("token %q, %v", tok, err)
	}
}
