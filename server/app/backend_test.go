package app

import (
	"os"

	"weaseldb/server/eventloop"
)

// make test runs this package once as is (epoll) and once with
// WEASELDB_TEST_IO_BACKEND=io_uring, so every behaviour test covers both
// of the event loop's backends.
func withTestBackend(o Options) Options {
	if o.Loop.Backend == "" {
		o.Loop.Backend = eventloop.Backend(os.Getenv("WEASELDB_TEST_IO_BACKEND"))
	}
	return o
}
