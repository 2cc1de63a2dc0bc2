package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// signalled is the cause of a context cancelled by a signal.
type signalled struct{ sig os.Signal }

func (s signalled) Error() string { return "received " + s.sig.String() }

// signalStatus is the exit status that says a process stopped on sig: 128
// plus its number (130 for Ctrl-C, 143 for SIGTERM), as shells report it.
func signalStatus(sig os.Signal) int {
	if n, ok := sig.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 128 + int(syscall.SIGINT)
}

// cancelOnSignal cancels ctx (cause: signalled) on the first Ctrl-C or
// SIGTERM, saying what the command does then (stopping), and exits at once, with the signal's status, on a second. It
// returns a function that stops listening.
func cancelOnSignal(cancel context.CancelCauseFunc, stderr io.Writer, stopping string) func() {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-ch
		fmt.Fprintf(stderr, "\nfanout: %v: %s (send it again to stop at once)\n", s, stopping)
		cancel(signalled{s})
		s = <-ch
		fmt.Fprintf(stderr, "fanout: %v again: stopping now, without saving\n", s)
		os.Exit(signalStatus(s))
	}()
	return func() { signal.Stop(ch) }
}

// survivePipes keeps a closed stdout or stderr (`fanout train | head -2`)
// from ending the process: by default the first write after the reader
// went away kills it with SIGPIPE, in the middle of a run, between a
// checkpoint and its epoch's line in metrics.jsonl. With SIGPIPE delivered
// to a channel such a write fails with EPIPE instead: what the closed
// stream would have shown is lost, and the run goes on. It returns a
// function that stops listening.
func survivePipes() func() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGPIPE)
	return func() { signal.Stop(ch) }
}

// interruptStatus is the exit status of a command whose context was
// cancelled: the signal's, or Ctrl-C's when no signal was the cause.
func interruptStatus(ctx context.Context) exitError {
	var s signalled
	if errors.As(context.Cause(ctx), &s) {
		return exitError(signalStatus(s.sig))
	}
	return exitError(signalStatus(os.Interrupt))
}
