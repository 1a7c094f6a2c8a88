package main

import (
	"fmt"
	"os"
	"strings"
)

// withTestBackend adds server.io_backend from WEASELDB_TEST_IO_BACKEND to
// a test's config: make test runs this package on the io_uring backend as
// well as on epoll.
func withTestBackend(body string) string {
	b := os.Getenv("WEASELDB_TEST_IO_BACKEND")
	if b == "" || strings.Contains(body, "io_backend") {
		return body
	}
	line := fmt.Sprintf("io_backend = %q\n", b)
	if i := strings.Index(body, "[server]\n"); i >= 0 {
		i += len("[server]\n")
		return body[:i] + line + body[i:]
	}
	return "[server]\n" + line + body
}
