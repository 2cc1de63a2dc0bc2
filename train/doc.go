// Package train runs the training step and the drivers around it. A run is
// a Config (hyper-parameters, typed once and validated once: config.go) and
// a Task (what is learnt: node classification, task_node.go; others, such
// as link prediction in train/link, plug in through the same interface):
// the task forms each step's batch from its items, supplies the loss head,
// evaluates and names what it adds to a checkpoint. step.go holds one
// iteration over a preallocated Plan (sample, gather, forward, loss,
// backward, Adam); the eager driver (eager.go) issues it batch by batch
// from the host, the replay driver (replay.go) captures it once and
// replays it. The hybrid and multi-GPU modes (train/hybrid,
// train/multigpu) are drivers around the same trainer.
package train
