package artifacts

import (
	"testing"
)

var seedSetupForTest = Setup{Name: SetupSeed, IOThreads: 8, ReleaseThreads: 1, WaitStrategy: "WaitIfUpstreamIdle", OkIterations: 4000,
	LoadThreads: 10, ConnectThreads: 2, Connections: 2000, RequestsPerConn: 500, Cores: CoresShared}

// Describe gives the load tester's connections in all, then the threads
// they are spread over (issue 24: "10 threads × 2000 connections" read as
// 20,000 connections).
func TestDescribeLoadTester(t *testing.T) {
	tests := []struct {
		name string
		s    Setup
		want string
	}{
		{"seed", seedSetupForTest, "8 I/O threads, 1 release thread, WaitIfUpstreamIdle; load tester: 2,000 connections in all, over 10 network threads and 2 connect threads; shared cores"},
		{"one of each", Setup{IOThreads: 1, ReleaseThreads: 1, WaitStrategy: "WaitIfStageEmpty", LoadThreads: 1, ConnectThreads: 1, Connections: 100, Cores: CoresShared},
			"1 I/O thread, 1 release thread, WaitIfStageEmpty; load tester: 100 connections in all, over 1 network thread and 1 connect thread; shared cores"},
		{"dedicated", Setup{IOThreads: 5, ReleaseThreads: 1, WaitStrategy: "WaitIfUpstreamIdle", LoadThreads: 6, ConnectThreads: 2, Connections: 600, Cores: CoresDedicated, CPUPlan: "io 1-5"},
			"5 I/O threads, 1 release thread, WaitIfUpstreamIdle; load tester: 600 connections in all, over 6 network threads and 2 connect threads; dedicated cores (io 1-5)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := DescribeSetup(tc.s); got != tc.want {
				t.Errorf("Describe() =\n %s\nwant\n %s", got, tc.want)
			}
		})
	}
}
