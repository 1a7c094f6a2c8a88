package artifacts

import (
	"fmt"

	"weaseldb/internal/numfmt"
)

// DescribeSetup is the setup in one line, for tables: the report's, its
// checks' and the runner's plan print it.
func DescribeSetup(s Setup) string {
	cores := "shared cores"
	if s.Cores == CoresDedicated {
		cores = "dedicated cores (" + s.CPUPlan + ")"
	}
	return fmt.Sprintf("%s, %s, %s; load tester: %s; %s",
		plural(s.IOThreads, "I/O thread"), plural(s.ReleaseThreads, "release thread"), s.WaitStrategy, DescribeLoad(s), cores)
}

// DescribeLoad is the load tester's side: the connections in all first,
// then the threads they are spread over. "10 threads × 2000 connections"
// read as 20,000 connections where there were 2,000.
func DescribeLoad(s Setup) string {
	return fmt.Sprintf("%s connections in all, over %s and %s",
		numfmt.Format(float64(s.Connections), 0), plural(s.LoadThreads, "network thread"), plural(s.ConnectThreads, "connect thread"))
}

// plural is "1 thread", "2 threads".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
