package loadtester

import (
	"fmt"
	"os"
	"time"

	"weaseldb/internal/numfmt"
	"weaseldb/internal/procstat"
	"weaseldb/loadtester/result"
)

// Two findings about the client that read differently: client_bound is a
// busy client (its CPU near what its network threads could use: the
// numbers may measure the client), judged in judgeClient and read by the
// gate; behind_schedule is an open-loop client whose sends went out late
// while a connection was free, which an idle client can do too (a slow
// wake-up, a descheduled thread). Late sends are in the corrected latency
// either way; a busy client is a reason to distrust the numbers.

// maxLateShare is the share of late sends past which a run is behind schedule.
const maxLateShare = 0.01

// judgeSchedule sets behind_schedule, with its reason and a warning, when
// more than maxLateShare of the answered requests were sent late while a
// connection was free.
func judgeSchedule(res *result.Result) {
	if res.RateAsked <= 0 || res.Requests <= 0 || float64(res.LateSends) <= maxLateShare*float64(res.Requests) {
		return
	}
	how := ""
	if l := res.LateSendLateness; l != nil {
		how = fmt.Sprintf(" (late by p50 %s, p99 %s, max %s)", numfmt.Latency(l.P50), numfmt.Latency(l.P99), numfmt.Latency(l.Max))
	}
	res.BehindSchedule = true
	res.BehindScheduleReason = fmt.Sprintf(
		"%d requests (%.1f%%) were sent more than %v after their intended time while a connection was free%s: the client fell behind its schedule (its CPU was %.0f%% of what its network threads could use)",
		res.LateSends, 100*float64(res.LateSends)/float64(res.Requests), time.Duration(lateSendThreshold), how, 100*res.ClientCPUFraction)
	res.Warnings = append(res.Warnings, res.BehindScheduleReason)
}

// machineName is who measures: "HOSTNAME (CPU model)", what a merge counts
// CPUs by.
func machineName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown host"
	}
	if model := procstat.CPUModel(); model != "" {
		return host + " (" + model + ")"
	}
	return host
}
