package job

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fanout-gnn/fanout/dataset/npy"
	"github.com/fanout-gnn/fanout/internal/quote"
	"github.com/fanout-gnn/fanout/train/link"
)

// LinkEval is `fanout eval` of a saved link run: every vertex's embedding
// and the scores of given pairs, from one of the run's checkpoints.
type LinkEval struct {
	Checkpoint string // RUNDIR/link_best.ckpt or RUNDIR/link_last.ckpt
	Embeddings string // .npy file for every vertex's embedding ("": none)
	Scores     string // .npy file of pairs; their scores go to ScoresPath(Scores)
	Source     Source // the dataset (the run's own: the run directory does not record it)
	Device     string
	Threads    int
	CUDA       CUDA
	Log        io.Writer
}

// IsLinkCheckpoint reports whether path is a link run's checkpoint: a
// link_last.ckpt or link_best.ckpt beside the run's link_state.json.
func IsLinkCheckpoint(path string) bool {
	base := filepath.Base(path)
	if base != link.LastFile && base != link.BestFile {
		return false
	}
	_, err := os.Stat(filepath.Join(filepath.Dir(path), link.StateFile))
	return err == nil
}

// ScoresPath is where eval writes the scores of the pairs in path:
// PAIRS.npy's scores go to PAIRS.scores.npy.
func ScoresPath(path string) string {
	return strings.TrimSuffix(path, ".npy") + ".scores.npy"
}

// RunLinkEval loads the run's settings and the checkpoint's weights into a
// link trainer on the dataset and writes what e asks for.
func RunLinkEval(e LinkEval) error {
	if e.Embeddings == "" && e.Scores == "" {
		return errors.New("eval of a link run: give --embeddings FILE or --scores PAIRS.npy")
	}
	cfg, err := link.ReadSettings(filepath.Dir(e.Checkpoint))
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	cfg.Features = 0
	ds, err := LoadDataset(e.Source, e.Threads, e.Log, nil)
	if err != nil {
		return err
	}
	defer ds.Close()
	be, _, err := OpenBackend(e.Device, e.Threads, e.CUDA, e.Log)
	if err != nil {
		return err
	}
	defer CloseBackend(be)
	tr, err := link.New(be, ds, cfg)
	if err != nil {
		return err
	}
	defer tr.Close()
	if err := tr.LoadWeights(e.Checkpoint); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return writeEmbeddingsAndScores(tr, e.Embeddings, e.Scores, ScoresPath(e.Scores))
}

// writeEmbeddingsAndScores writes the trainer's embeddings to embFile and
// the scores of the pairs in pairsFile to scoresFile (each where set).
func writeEmbeddingsAndScores(tr *link.Trainer, embFile, pairsFile, scoresFile string) error {
	if embFile == "" && pairsFile == "" {
		return nil
	}
	emb, err := tr.Embeddings()
	if err != nil {
		return err
	}
	if embFile != "" {
		n := int64(len(emb) / max(tr.EmbedDim(), 1))
		if err := npy.WriteFile(embFile, emb, []int64{n, int64(tr.EmbedDim())}); err != nil {
			return fmt.Errorf("embeddings: %w", err)
		}
	}
	if pairsFile == "" {
		return nil
	}
	pairs, err := readPairs(pairsFile)
	if err != nil {
		return err
	}
	scores, err := tr.ScorePairs(emb, pairs)
	if err != nil {
		return fmt.Errorf("scores: %s: %w", pairsFile, err)
	}
	if err := npy.WriteFile(scoresFile, scores, []int64{int64(len(scores))}); err != nil {
		return fmt.Errorf("scores: %w", err)
	}
	return nil
}

// EvalLinkRun evaluates e's checkpoint when it is a link run's (its
// embeddings and the scores of the pairs in scores, a .npy file of them)
// and says so with done; done is false for a node classifier's, which
// RunEval evaluates. Outputs that one kind has and the other not are
// refused, naming the checkpoint.
func EvalLinkRun(e Eval, scores string) (done bool, err error) {
	if !IsLinkCheckpoint(e.Checkpoint) {
		if scores != "" {
			return true, fmt.Errorf("--scores %s: pairs are scored by a link run's checkpoint (RUNDIR/%s), not %s", quote.Quote(scores), link.BestFile, quote.Quote(e.Checkpoint))
		}
		return false, nil
	}
	if e.Predictions != "" || e.Logits != "" || e.Probabilities != "" {
		return true, fmt.Errorf("%s is a link run's: it has embeddings and pair scores (--embeddings, --scores), not classes", e.Checkpoint)
	}
	return true, RunLinkEval(LinkEval{Checkpoint: e.Checkpoint, Embeddings: e.Embeddings, Scores: scores,
		Source: e.Source, Device: e.Device, Threads: e.Threads, CUDA: e.CUDA, Log: e.Log})
}
