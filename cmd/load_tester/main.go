// Command load_tester drives HTTP/1.1 load at a server and reports
// throughput, latency percentiles, errors by kind and its own CPU use.
// See docs/load_tester.md; the work is in package loadtester.
package main

import (
	"os"

	"weaseldb/loadtester"
)

func main() {
	os.Exit(loadtester.Main(os.Args[1:], os.Stdout, os.Stderr))
}
