package main

import "os"

// LOADTESTER_TEST_IO_BACKEND=io_uring runs the command's tests on the
// io_uring engine (make race runs both).
func init() { testIOBackend = os.Getenv("LOADTESTER_TEST_IO_BACKEND") }
