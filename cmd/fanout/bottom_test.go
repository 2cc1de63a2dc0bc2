package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBottomProductsFlag: --bottom-products bfloat16 trains GraphSAGE;
// other models, hot vertices and unknown values are one-line errors naming
// the flag; the CPU's default stays float32 and the bench reports it.
func TestBottomProductsFlag(t *testing.T) {
	code, out, stderr := fanout(t, "train", "--device", "cpu", "--epochs", "1", "--bottom-products", "bfloat16")
	if code != 0 || !strings.Contains(out, "test accuracy") {
		t.Fatalf("bfloat16: exit %d: %s", code, stderr)
	}
	oneLineError(t, "bottom-products: bfloat16 is GraphSAGE's and GAT's only (model gcn)", "train", "--device", "cpu", "--model", "gcn", "--bottom-products", "bfloat16")
	oneLineError(t, `bottom-products: "half"`, "train", "--device", "cpu", "--bottom-products", "half")
	oneLineError(t, "bottom-products: bfloat16, but the hybrid mode's hot vertices", "train", "--device", "cpu", "--mode", "hybrid", "--hot-ratio", "0.1", "--bottom-products", "bfloat16")

	for _, c := range []struct{ flag, want string }{{"", ""}, {"--bottom-products=bfloat16", "bfloat16"}} {
		args := []string{"bench", "--device", "cpu", "--steps", "2", "--warmup", "1", "--json"}
		if c.flag != "" {
			args = append(args, c.flag)
		}
		code, out, stderr := fanout(t, args...)
		var rep struct {
			BottomProducts string `json:"bottom_products"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
			t.Fatalf("bench %q: exit %d: %s%s", c.flag, code, stderr, out)
		}
		if rep.BottomProducts != c.want {
			t.Errorf("bench %q on the CPU: bottom_products %q, want %q", c.flag, rep.BottomProducts, c.want)
		}
	}
}
