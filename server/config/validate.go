package config

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Bounds of the integer options, inclusive. Max == 0 means "no upper bound".
const (
	MinIOThreads, MaxIOThreads                     = 1, 1024
	MinEventBatchSize, MaxEventBatchSize           = 1, 65536
	MinIOUringPeekNs, MaxIOUringPeekNs             = 0, 1_000_000
	MinIOUringRoundBudget, MaxIOUringRoundBudget   = 0, 65536
	MinReadBufferSize, MaxReadBufferSize           = 1024, 16 << 20
	MinMaxRequestSizeBytes, MaxMaxRequestSizeBytes = 1024, 1 << 30
	MinMinRequestIDLength, MaxMinRequestIDLength   = 8, 256
	MinRetentionHours, MaxRetentionHours           = 1, 8760
	MinReleaseThreads, MaxReleaseThreads           = 1, 64
	MinKeepaliveSeconds, MaxKeepaliveSeconds       = 1, 3600
	// commit.max_request_ids is 0 (no cap) or in MinMaxRequestIDs..MaxMaxRequestIDs.
	MinMaxRequestIDs, MaxMaxRequestIDs             = 1024, 1 << 30
	MinSlowConsumerGrace, MaxSlowConsumerGrace     = 0, 3600
	MinOkResolveIterations, MaxOkResolveIterations = 0, 100_000_000
	MinOkResolveSpinNs, MaxOkResolveSpinNs         = 0, 1_000_000_000
	MinCommitResolveSpinNs, MaxCommitResolveSpinNs = 0, 1_000_000_000
	MinStatusResolveSpinNs, MaxStatusResolveSpinNs = 0, 1_000_000_000
	// The iteration knobs share the ok knob's range.
	MinCommitResolveIterations, MaxCommitResolveIterations = 0, 100_000_000
	MinStatusResolveIterations, MaxStatusResolveIterations = 0, 100_000_000
	// benchmark.ok_body_bytes: {"status":"ok"} is the smallest body; the
	// largest is a response that is still built once and kept in memory.
	MinOkBodyBytes, MaxOkBodyBytes       = 15, 16 << 20
	MaxTimeoutSeconds                    = 86400 // a day
	MinMaxConnections, MaxMaxConnections = 0, 1 << 24
	MaxPort                              = 65535
	// MaxCPU is a sanity bound on a CPU number in a pinning list; the server
	// checks the real allowed set (sched_getaffinity) at start.
	MaxCPU = 65535
	// maxUnixPath is sun_path's size minus the terminating NUL.
	maxUnixPath = 107
)

// Validate checks every value and shape of c and returns an Errors listing
// each problem, or nil.
func (c *Config) Validate() error {
	var l errorList
	c.validate(&l)
	return l.err()
}

func (c *Config) validate(l *errorList) {
	validateInterfaces(l, c.Server.Interfaces)
	checkRange(l, "server.io_threads", int64(c.Server.IOThreads), MinIOThreads, MaxIOThreads)
	checkRange(l, "server.event_batch_size", int64(c.Server.EventBatchSize), MinEventBatchSize, MaxEventBatchSize)
	checkRange(l, "server.io_uring_peek_ns", int64(c.Server.IOUringPeekNs), MinIOUringPeekNs, MaxIOUringPeekNs)
	checkRange(l, "server.io_uring_round_budget", int64(c.Server.IOUringRoundBudget), MinIOUringRoundBudget, MaxIOUringRoundBudget)
	checkRange(l, "server.read_buffer_size", int64(c.Server.ReadBufferSize), MinReadBufferSize, MaxReadBufferSize)
	checkRange(l, "server.max_request_size_bytes", c.Server.MaxRequestSizeBytes, MinMaxRequestSizeBytes, MaxMaxRequestSizeBytes)
	validateIOCPUs(l, c.Server.IOCPUs, c.Server.IOThreads)
	checkSeconds(l, "server.header_timeout_seconds", c.Server.HeaderTimeoutSeconds)
	checkSeconds(l, "server.body_timeout_seconds", c.Server.BodyTimeoutSeconds)
	checkSeconds(l, "server.idle_timeout_seconds", c.Server.IdleTimeoutSeconds)
	checkSeconds(l, "server.write_timeout_seconds", c.Server.WriteTimeoutSeconds)
	checkRange(l, "server.max_connections", int64(c.Server.MaxConnections), MinMaxConnections, MaxMaxConnections)
	validateAdminAddress(l, c.Server.AdminAddress)

	checkRange(l, "commit.min_request_id_length", int64(c.Commit.MinRequestIDLength), MinMinRequestIDLength, MaxMinRequestIDLength)
	checkRange(l, "commit.request_id_retention_hours", int64(c.Commit.RequestIDRetentionHours), MinRetentionHours, MaxRetentionHours)
	checkPositive(l, "commit.request_id_retention_versions", c.Commit.RequestIDRetentionVersions)
	if v := int64(c.Commit.MaxRequestIDs); v != 0 && (v < MinMaxRequestIDs || v > MaxMaxRequestIDs) {
		l.add("commit.max_request_ids", "must be 0 (no cap) or between %d and %d, got %d", MinMaxRequestIDs, MaxMaxRequestIDs, v)
	}
	if !slices.Contains(ListenerModes, c.Server.Listener) {
		l.add("server.listener", "must be one of %s, got %q", quoteAll(ListenerModes), c.Server.Listener)
	}
	if !slices.Contains(IOBackends, c.Server.IOBackend) {
		l.add("server.io_backend", "must be one of %s, got %q", quoteAll(IOBackends), c.Server.IOBackend)
	}
	if !slices.Contains(WaitStrategies, c.Commit.PipelineWaitStrategy) {
		l.add("commit.pipeline_wait_strategy", "must be one of %s, got %q",
			quoteAll(WaitStrategies), c.Commit.PipelineWaitStrategy)
	}
	checkRange(l, "commit.pipeline_release_threads", int64(c.Commit.PipelineReleaseThreads), MinReleaseThreads, MaxReleaseThreads)
	validatePipelineCPUs(l, c.Commit.PipelineCPUs, c.Commit.PipelineReleaseThreads)

	checkPositive(l, "subscription.max_buffer_size_bytes", c.Subscription.MaxBufferSizeBytes)
	checkRange(l, "subscription.keepalive_interval_seconds", int64(c.Subscription.KeepaliveIntervalSeconds), MinKeepaliveSeconds, MaxKeepaliveSeconds)
	checkRange(l, "subscription.slow_consumer_grace_seconds", int64(c.Subscription.SlowConsumerGraceSeconds), MinSlowConsumerGrace, MaxSlowConsumerGrace)

	checkRange(l, "benchmark.ok_resolve_iterations", int64(c.Benchmark.OkResolveIterations), MinOkResolveIterations, MaxOkResolveIterations)
	checkRange(l, "benchmark.ok_resolve_spin_ns", c.Benchmark.OkResolveSpinNs, MinOkResolveSpinNs, MaxOkResolveSpinNs)
	checkRange(l, "benchmark.commit_resolve_spin_ns", c.Benchmark.CommitResolveSpinNs, MinCommitResolveSpinNs, MaxCommitResolveSpinNs)
	checkRange(l, "benchmark.status_resolve_spin_ns", c.Benchmark.StatusResolveSpinNs, MinStatusResolveSpinNs, MaxStatusResolveSpinNs)
	checkRange(l, "benchmark.commit_resolve_iterations", int64(c.Benchmark.CommitResolveIterations), MinCommitResolveIterations, MaxCommitResolveIterations)
	checkRange(l, "benchmark.status_resolve_iterations", int64(c.Benchmark.StatusResolveIterations), MinStatusResolveIterations, MaxStatusResolveIterations)
	if v := c.Benchmark.OkBodyBytes; v < MinOkBodyBytes || v > MaxOkBodyBytes {
		l.add("benchmark.ok_body_bytes", `must be between %d and %d bytes (%d: the body {"status":"ok"} itself, larger ones are padded inside the JSON), got %d`,
			MinOkBodyBytes, MaxOkBodyBytes, MinOkBodyBytes, v)
	}
}

func checkRange(l *errorList, key string, v, lo, hi int64) {
	if v < lo || v > hi {
		l.add(key, "must be between %d and %d, got %d", lo, hi, v)
	}
}

// checkSeconds accepts 0 (off) up to MaxTimeoutSeconds; NaN and the
// infinities are refused by the range test too.
func checkSeconds(l *errorList, key string, v float64) {
	if !(v >= 0 && v <= MaxTimeoutSeconds) {
		l.add(key, "must be between 0 (off) and %d seconds, got %v", MaxTimeoutSeconds, v)
	}
}

func checkPositive(l *errorList, key string, v int64) {
	if v <= 0 {
		l.add(key, "must be greater than 0, got %d", v)
	}
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func validateInterfaces(l *errorList, ifaces []Interface) {
	if len(ifaces) == 0 {
		l.add("server.interfaces", "must list at least one interface (tcp or unix)")
		return
	}
	for i, iface := range ifaces {
		key := fmt.Sprintf("server.interfaces[%d]", i)
		switch iface.Type {
		case InterfaceTCP:
			if iface.Address == "" {
				l.add(key+".address", "is required for a tcp interface")
			}
			if iface.Port < 0 || iface.Port > MaxPort {
				l.add(key+".port", "must be between 0 and %d (0 = ephemeral), got %d", MaxPort, iface.Port)
			}
			if iface.Path != "" {
				l.add(key+".path", "is only allowed for a unix interface")
			}
		case InterfaceUnix:
			if iface.Path == "" {
				l.add(key+".path", "is required for a unix interface")
			} else if len(iface.Path) > maxUnixPath {
				l.add(key+".path", "must be at most %d bytes (sun_path), got %d", maxUnixPath, len(iface.Path))
			}
			if iface.Address != "" || iface.Port != 0 {
				l.add(key, "address and port are only allowed for a tcp interface")
			}
		default:
			l.add(key+".type", `must be one of "tcp", "unix", got %q`, iface.Type)
		}
	}
}

func validateCPUList(l *errorList, key string, cpus []int) {
	for i, cpu := range cpus {
		if cpu < 0 || cpu > MaxCPU {
			l.add(fmt.Sprintf("%s[%d]", key, i), "must be a CPU number between 0 and %d, got %d", MaxCPU, cpu)
		}
	}
}

func validateIOCPUs(l *errorList, cpus []int, ioThreads int) {
	if len(cpus) == 0 {
		return
	}
	if len(cpus) != ioThreads {
		l.add("server.io_cpus", "must list one CPU per I/O thread (io_threads = %d) or be empty, got %d", ioThreads, len(cpus))
	}
	validateCPUList(l, "server.io_cpus", cpus)
}

// stageThreads is the thread count of each commit pipeline stage: sequence,
// resolve and persist have one thread; release has pipeline_release_threads.
func stageThreads(releaseThreads int) [PipelineStages]int {
	return [PipelineStages]int{1, 1, 1, releaseThreads}
}

func validatePipelineCPUs(l *errorList, stages [][]int, releaseThreads int) {
	if len(stages) == 0 {
		return
	}
	if len(stages) != PipelineStages {
		l.add("commit.pipeline_cpus", "must list %d CPU lists (sequence, resolve, persist, release) or be empty, got %d",
			PipelineStages, len(stages))
		return
	}
	want := stageThreads(releaseThreads)
	for s, cpus := range stages {
		key := fmt.Sprintf("commit.pipeline_cpus[%d]", s)
		if len(cpus) != want[s] {
			l.add(key, "must list one CPU per thread of stage %d (%d), got %d", s, want[s], len(cpus))
		}
		validateCPUList(l, key, cpus)
	}
}

// validateAdminAddress accepts "" (off) or HOST:PORT with a port 0..65535
// (0: an ephemeral one); an empty HOST means every interface.
func validateAdminAddress(l *errorList, addr string) {
	if addr == "" {
		return
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		l.add("server.admin_address", `must be "" (off) or "HOST:PORT", got %q (%v)`, addr, err)
		return
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > MaxPort {
		l.add("server.admin_address", `must be "" (off) or "HOST:PORT" with a port between 0 and %d, got %q`, MaxPort, addr)
	}
}
