package main

import "os"

// LOADTESTER_TEST_IO_BACKEND=io_uring runs the command's tests on the
// io_uring engine (make race runs both). go test's cache does not see a
// variable read in init, only one read while a test runs: run with
// -count=1 (as make race does), or a cached epoll result is reported.
func init() { testIOBackend = os.Getenv("LOADTESTER_TEST_IO_BACKEND") }
