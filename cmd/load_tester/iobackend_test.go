package main

import "os"

// LOADTESTER_TEST_IO_BACKEND=epoll runs the command's tests on the epoll
// engine, io_uring being the default (make race runs both). go test's cache does not see a
// variable read in init, only one read while a test runs: run with
// -count=1 (as make race does), or a cached result of the other engine is reported.
func init() { testIOBackend = os.Getenv("LOADTESTER_TEST_IO_BACKEND") }
