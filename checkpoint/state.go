package checkpoint

import "encoding/json"

// State is where a run stands; it is saved in checkpoints.
type State struct {
	Epoch       int   `json:"epoch"`         // epoch in progress (0-based)
	StepInEpoch int   `json:"step_in_epoch"` // next step of that epoch
	AdamT       int32 `json:"adam_t"`        // optimizer steps taken
	// BestValid is the task's primary validation figure of the best
	// evaluation so far (node classification: accuracy; link prediction:
	// ROC-AUC), BestEpoch its epoch (1-based; 0 = none yet), TestAtBest
	// the primary test figure of that model.
	BestValid  float64 `json:"best_valid_acc"`
	BestEpoch  int     `json:"best_epoch"`
	TestAtBest float64 `json:"test_acc_at_best"`
	SinceBest  int     `json:"evals_since_best"`
	Seconds    float64 `json:"seconds"` // training wall time so far, evaluations excluded
	// BestStep is the step of BestEpoch after which the best evaluation
	// ran: 0 for the evaluation at the epoch's end, which is also what
	// checkpoints of earlier versions hold.
	BestStep int `json:"best_step,omitempty"`
	// Elapsed is the wall time of the run's epoch loops so far in seconds,
	// evaluations and checkpoints included (absent in checkpoints of
	// earlier versions): what a time to a target accuracy counts.
	Elapsed float64 `json:"elapsed_s,omitempty"`
	// BestMetrics and TestMetrics are every figure of the best evaluation
	// and of its test, as the task reports them (JSON objects; absent in
	// checkpoints of earlier versions).
	BestMetrics json.RawMessage `json:"best_metrics,omitempty"`
	TestMetrics json.RawMessage `json:"test_metrics,omitempty"`
}
