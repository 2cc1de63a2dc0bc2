module github.com/fanout-gnn/fanout

go 1.26.8

require (
	github.com/ebitengine/purego v0.11.3
	github.com/schollz/progressbar/v3 v3.19.1
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.44.0
	gonum.org/v1/gonum v0.17.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
)
