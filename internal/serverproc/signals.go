package serverproc

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// SupervisorContext is the context a command that starts servers runs
// under: cancelled on SIGINT or SIGTERM, so the command stops the servers it
// started before it exits. They run in process groups of their own (Start),
// which a terminal's Ctrl-C does not reach: nobody else will stop them.
//
// It also ignores SIGPIPE. Ctrl-C reaches the reader of the command's output
// too (a `| tee` in a script); a write to a dead pipe on stdout or stderr
// would otherwise kill the command at once, its servers left running. With
// SIGPIPE ignored that write fails with EPIPE and the command goes on to
// stop them.
func SupervisorContext() (context.Context, context.CancelFunc) {
	signal.Ignore(syscall.SIGPIPE)
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
