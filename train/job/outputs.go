package job

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/export"
	"github.com/fanout-gnn/fanout/nn"
	"github.com/fanout-gnn/fanout/train"
	"github.com/fanout-gnn/fanout/train/link"
)

// outputWriter writes a trained model's per-vertex outputs and exports,
// saying each file on log. A group's ranks other than 0 compute what rank 0
// writes (its evaluation's collectives need them) and write nothing.
type outputWriter struct {
	log   io.Writer
	write bool
	data  string // the dataset's directory ("" for a preset): its original ids key the outputs
}

// npy writes data [shape] to path (when set and writing) and says so.
func (w outputWriter) npy(what, path string, data []float32, shape ...int64) error {
	if path == "" || !w.write {
		return nil
	}
	if err := npy.WriteFile(path, data, shape); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	fmt.Fprintf(w.log, "wrote %s %v to %s\n", what, shape, path)
	return nil
}

// nodeEmbeddings writes a node classifier's embeddings of every vertex,
// its last hidden layer (layer-wise full-neighbour inference), to path.
func (w outputWriter) nodeEmbeddings(tr *train.Trainer, path string) error {
	if path == "" {
		return nil
	}
	mc := tr.Model().Config()
	if mc.Typed() {
		return w.typedEmbeddings(tr, path)
	}
	if mc.Layers < 2 {
		return errors.New("embeddings: a one-layer model has no hidden layer")
	}
	_, dim := mc.Dims(mc.Layers - 2)
	emb, err := infer(tr, train.InferOptions{Layers: mc.Layers - 1}, dim)
	if err != nil {
		return err
	}
	return w.npy("embeddings", path, emb, tr.Dataset().Graph.NumNodes, int64(dim))
}

// nodeLogits writes a node classifier's logits of every vertex and their
// softmax (layer-wise full-neighbour inference) to the paths set.
func (w outputWriter) nodeLogits(tr *train.Trainer, logitsPath, probsPath string) error {
	if logitsPath == "" && probsPath == "" {
		return nil
	}
	classes := tr.Model().Config().Classes
	var logits []float32
	var err error
	if tr.Model().Config().Typed() {
		logits, err = tr.Outputs() // sampled, as a typed model evaluates
	} else {
		logits, err = infer(tr, train.InferOptions{}, classes)
	}
	if err != nil {
		return err
	}
	n := int64(tr.OutputRows())
	if err := w.npy("logits", logitsPath, logits, n, int64(classes)); err != nil {
		return err
	}
	softmaxRows(logits, classes)
	return w.npy("probabilities", probsPath, logits, n, int64(classes))
}

// infer runs layer-wise inference and reads the [N, dim] table back.
func infer(tr *train.Trainer, opt train.InferOptions, dim int) ([]float32, error) {
	be := tr.Backend()
	buf, err := tr.InferAllWith(opt)
	if err != nil {
		return nil, err
	}
	host := make([]float32, int(tr.Dataset().Graph.NumNodes)*dim)
	be.Read(host, buf, 0)
	be.Free(buf)
	return host, be.Sync()
}

// softmaxRows replaces each row of x ([rows, k]) by its softmax, computed
// in float64 after subtracting the row's maximum.
func softmaxRows(x []float32, k int) {
	for r := 0; r+k <= len(x); r += k {
		row := x[r : r+k]
		m := math.Inf(-1)
		for _, v := range row {
			m = max(m, float64(v))
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(float64(v) - m)
		}
		for i, v := range row {
			row[i] = float32(math.Exp(float64(v)-m) / sum)
		}
	}
}

// linkOutputs writes a link predictor's embeddings of every vertex to
// embFile and the scores of the pairs in pairsFile to scoresFile (each
// where set).
func (w outputWriter) linkOutputs(tr *train.Trainer, embFile, pairsFile, scoresFile string) error {
	if embFile == "" && pairsFile == "" {
		return nil
	}
	emb, dim, err := link.Embeddings(tr)
	if err != nil {
		return err
	}
	n := int64(len(emb) / max(dim, 1))
	if err := w.npy("embeddings", embFile, emb, n, int64(dim)); err != nil || pairsFile == "" {
		return err
	}
	pairs, err := readPairs(pairsFile)
	if err != nil {
		return err
	}
	scores, err := link.ScorePairs(tr, emb, pairs)
	if err != nil {
		return fmt.Errorf("scores: %s: %w", pairsFile, err)
	}
	return w.npy("scores", scoresFile, scores, int64(len(scores)))
}

// linkModel writes a link predictor's encoder under PyTorch Geometric's
// names and, for the MLP decoder, the decoder as torch.nn.Sequential's
// state dict into dir.
func (w outputWriter) linkModel(tr *train.Trainer, dir string) error {
	enc, err := modelWeights(tr)
	if err != nil {
		return err
	}
	ts, meta, err := export.PyG(enc)
	if err != nil {
		return err
	}
	if err := export.WriteSafetensors(filepath.Join(dir, EncoderFile), ts, meta); err != nil {
		return err
	}
	dec, err := readParams(tr, tr.Head().Params())
	if err != nil || len(dec) == 0 {
		return err
	}
	seq, err := export.Sequential(dec)
	if err != nil {
		return err
	}
	return export.WriteSafetensors(filepath.Join(dir, DecoderFile), seq,
		map[string]string{"decoder": "Sequential(Linear, ReLU, Linear) over the element-wise product of two embeddings"})
}

// modelWeights reads the trainer's model for the exports.
func modelWeights(tr *train.Trainer) (export.Model, error) {
	ps, err := readParams(tr, tr.Model().Params())
	return export.Model{Config: tr.Model().Config(), Params: ps, Steps: tr.State().AdamT}, err
}

// readParams reads parameters' weights to the host.
func readParams(tr *train.Trainer, params []*nn.Param) ([]export.Param, error) {
	be := tr.Backend()
	out := make([]export.Param, len(params))
	for i, p := range params {
		out[i] = export.Param{Name: strings.TrimPrefix(p.Name, "decoder."), Shape: p.Shape, Data: make([]float32, p.Size())}
		be.Read(out[i].Data, p.W, 0)
	}
	return out, be.Sync()
}

// SavedModel is a checkpoint's model for the exports: its configuration,
// the model's parameters (not the task's: a link run's decoder is
// exported on its own) and the optimiser steps.
func SavedModel(s *train.Saved) export.Model {
	m := export.Model{Config: s.Model, Steps: s.File.State.AdamT}
	for i, p := range s.File.Params {
		if strings.HasPrefix(p.Name, "decoder.") {
			continue
		}
		m.Params = append(m.Params, export.Param{Name: p.Name, Shape: p.Shape, Data: s.Weights(i)})
	}
	return m
}

// LoadForExport reads a checkpoint file for the exports (today's, or a
// link run's of an earlier version).
func LoadForExport(path string) (export.Model, error) {
	s, err := loadCheckpoint(path)
	if err != nil {
		return export.Model{}, err
	}
	return SavedModel(s), nil
}

// typedEmbeddings writes a typed model's last hidden rows of every vertex
// of each type that relations reach (sampled, seeded by the type's own
// vertices: train.Trainer.TypedEmbeddings) to TypedEmbeddingPath(path,
// type), each keyed by the type's original ids where the dataset in data
// keeps them.
func (w outputWriter) typedEmbeddings(tr *train.Trainer, path string) error {
	ds := tr.Dataset()
	mc := tr.Model().Config()
	for t, vt := range ds.Types {
		if len(mc.RelsInto(t)) == 0 {
			fmt.Fprintf(w.log, "embeddings: no relation reaches type %s: it has no hidden rows\n", vt.Name)
			continue
		}
		emb, dim, err := tr.TypedEmbeddings(t)
		if err != nil {
			return err
		}
		p := TypedEmbeddingPath(path, vt.Name)
		if err := w.npy("embeddings of "+vt.Name, p, emb, vt.Count, int64(dim)); err != nil {
			return err
		}
		if w.write && w.data != "" {
			if err := keyTypeIDs(w.data, w.log, p, vt.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// typedEmbeddingsThere refuses to replace the per-type embedding files of
// path that exist, one per type named in types.
func typedEmbeddingsThere(path string, types []string) error {
	for _, typ := range types {
		if err := notThere("embeddings", TypedEmbeddingPath(path, typ)); err != nil {
			return err
		}
	}
	return nil
}

// TypedEmbeddingPath is where a typed model's embeddings of one type go:
// E.npy's of type author to E.author.npy.
func TypedEmbeddingPath(path, typ string) string {
	return strings.TrimSuffix(path, ".npy") + "." + typ + ".npy"
}
