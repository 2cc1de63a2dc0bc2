package graphbolt_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fanout-gnn/fanout/dataset/graphbolt"
	"github.com/fanout-gnn/fanout/dataset/graphbolt/graphbolttest"
	"github.com/fanout-gnn/fanout/internal/quote"
)

// TestPathsStayInside: a path in metadata.yaml that is absolute or climbs
// out of the dataset's directory is refused before anything is opened,
// naming the entry and the path, even where the file it names exists
// and would import.
func TestPathsStayInside(t *testing.T) {
	f := graphbolttest.New(40)
	for _, c := range []struct {
		name, old, new, field string
	}{
		{"absolute features", "path: data/node-feat.npy", "path: /etc/passwd", "feature_data[0]"},
		{"features above", "path: data/node-feat.npy", "path: ../node-feat.npy", "feature_data[0]"},
		{"edges above", "path: edges/edge.csv", "path: edges/../../edge.csv", "graph.edges[0]"},
		{"seeds above", "path: set/test-seeds.npy", "path: set/../../test-seeds.npy", "tasks[0].test_set[0].data[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := f.Write(t)
			// What the climbing paths name exists above the directory.
			for _, name := range []string{"data/node-feat.npy", "edges/edge.csv", "set/test-seeds.npy"} {
				data, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				graphbolttest.WriteFile(t, filepath.Dir(dir), filepath.Base(name), string(data))
			}
			editMetadata(t, dir, c.old, c.new)
			_, err := graphbolt.Import(dir, graphbolt.Options{})
			path := strings.TrimPrefix(c.new, "path: ")
			if err == nil || !strings.Contains(err.Error(), c.field+`: path "`+path+`" leaves the dataset's directory`) {
				t.Fatalf("error %v, want %s's path %q refused", err, c.field, path)
			}
		})
	}
}

// TestMetadataQuotesLittle: whatever metadata.yaml holds (long names,
// types, formats, paths, many bad values) or the options name, a message
// quotes at most quote.Limit bytes of it, on one line.
func TestMetadataQuotesLittle(t *testing.T) {
	long := strings.Repeat("x", 1<<16)
	var badNums strings.Builder
	for range 2000 {
		badNums.WriteString("    - num: many\n")
	}
	for _, c := range []struct {
		name, old, new string
		o              graphbolt.Options
		want           string
	}{
		{name: "feature flag", o: graphbolt.Options{Feature: long}, want: "no node feature"},
		{name: "task flag", o: graphbolt.Options{Task: long}, want: "no task"},
		{name: "feature name", old: "name: feat\n    format: numpy\n    in_memory", new: "name: " + long + "\n    format: numpy\n    in_memory", want: "no node feature"},
		{name: "edge type", old: "    - format: csv\n", new: "    - type: " + long + "\n      format: csv\n", want: "a typed graph names every node type"},
		{name: "format", old: "format: csv", new: "format: " + long, want: "has format"},
		{name: "long path", old: "path: edges/edge.csv", new: "path: edges/" + long, want: "longer than 200 bytes"},
		{name: "torch path", old: "format: numpy\n    in_memory: false\n    path: data/node-feat.npy", new: "format: torch\n    path: " + long, want: "longer than 200 bytes"},
		{name: "bad counts", old: "    - num: 40\n", new: badNums.String(), want: "(and 1999 more)"},
		{name: "anchor", old: "dataset_name: graphbolt_fixture", new: "dataset_name: *" + long, want: "unknown anchor"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := graphbolttest.New(40).Write(t)
			if c.old != "" {
				editMetadata(t, dir, c.old, c.new)
			}
			_, err := graphbolt.Import(dir, c.o)
			if err == nil {
				t.Fatal("imported")
			}
			msg := strings.ReplaceAll(err.Error(), dir, "DIR")
			if !strings.Contains(msg, c.want) || len(msg) > 2*quote.Limit+300 || strings.Contains(msg, "\n") {
				t.Errorf("a message of %d bytes, want one line with %q quoting at most %d bytes: %.500s", len(msg), c.want, quote.Limit, msg)
			}
		})
	}
}

// TestWrongVertexCountFailsEarly: a vertex count far beyond the features'
// rows is refused by the features' shape before a graph of that size is
// built.
func TestWrongVertexCountFailsEarly(t *testing.T) {
	dir := graphbolttest.New(40).Write(t)
	editMetadata(t, dir, "    - num: 40\n", "    - num: 2000000000\n")
	_, err := graphbolt.Import(dir, graphbolt.Options{})
	if err == nil || !strings.Contains(err.Error(), "node-feat.npy") || !strings.Contains(err.Error(), "want [2000000000, features]") {
		t.Fatalf("error %v, want the features' shape refused", err)
	}
}

// FuzzMetadata: any metadata.yaml over the fixture's files imports or
// fails with one short line; a path outside the directory is always
// refused, and nothing panics or hangs.
func FuzzMetadata(f *testing.F) {
	fx := graphbolttest.New(40)
	dir := fx.Write(f)
	text, err := os.ReadFile(filepath.Join(dir, graphbolt.MetadataFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(text))
	fx.NumpyEdges, fx.LabelFeat = true, true
	numpyDir := fx.Write(f)
	numpyText, err := os.ReadFile(filepath.Join(numpyDir, graphbolt.MetadataFile))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range []string{"edges/edge.npy", "data/node-label.npy"} {
		data, err := os.ReadFile(filepath.Join(numpyDir, name))
		if err != nil {
			f.Fatal(err)
		}
		graphbolttest.WriteFile(f, dir, name, string(data))
	}
	f.Add(string(numpyText))
	f.Add(strings.Replace(string(text), "path: data/node-feat.npy", "path: ../x.npy", 1))
	f.Add(strings.Replace(string(text), "num_classes: 3", "num_classes: &a [*a]", 1))
	f.Add("graph_topology:\n  type: FusedCSCSamplingGraph\n  path: preprocessed/g.pt\n")
	f.Add("graph: {nodes: [{num: 40}], edges: [{format: numpy, path: set/train-seeds.npy}]}\n")
	f.Fuzz(func(t *testing.T, text string) {
		d, err := graphbolt.ImportText(dir, []byte(text), graphbolt.Options{})
		if err != nil {
			msg := strings.ReplaceAll(err.Error(), dir, "DIR")
			if len(msg) > 4*quote.Limit+400 || strings.Contains(msg, "\n") {
				t.Fatalf("a message of %d bytes or lines: %.600q", len(msg), msg)
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("imported an invalid dataset: %v", err)
		}
		if strings.Contains(text, "..") || strings.Contains(text, "path: /") {
			escapes(t, text)
		}
	})
}

// escapes fails when text, which imported, names a path outside the
// directory.
func escapes(t *testing.T, text string) {
	for _, line := range strings.Split(text, "\n") {
		_, p, ok := strings.Cut(line, "path:")
		p = strings.Trim(strings.TrimSpace(p), `"'`)
		if ok && p != "" && !filepath.IsLocal(p) {
			t.Fatalf("imported a dataset whose metadata names %q", p)
		}
	}
}
