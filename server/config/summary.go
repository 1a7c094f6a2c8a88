package config

import (
	"fmt"
	"strings"
)

// Summary renders the effective configuration, one option per line, in the
// order and under the names of the TOML file, so a log shows exactly what the
// server runs with.
func (c Config) Summary() string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("[server]")
	for i, iface := range c.Server.Interfaces {
		line("  interfaces[%d]                 = %s", i, iface)
	}
	line("  io_threads                    = %d", c.Server.IOThreads)
	line("  event_batch_size              = %d", c.Server.EventBatchSize)
	line("  read_buffer_size              = %d bytes", c.Server.ReadBufferSize)
	line("  max_request_size_bytes        = %d bytes", c.Server.MaxRequestSizeBytes)
	line("  io_cpus                       = %s", cpuList(c.Server.IOCPUs))
	line("  io_backend                    = %s", c.Server.IOBackend)
	line("  io_uring_peek_ns              = %d", c.Server.IOUringPeekNs)
	line("  io_uring_round_budget         = %d", c.Server.IOUringRoundBudget)
	line("  listener                      = %s", c.Server.Listener)
	line("  thread_names                  = %s", c.Server.ThreadNames)
	if c.Server.AdminAddress == "" {
		line("  admin_address                 = off")
	} else {
		line("  admin_address                 = %s", c.Server.AdminAddress)
	}
	line("  header_timeout_seconds        = %s", seconds(c.Server.HeaderTimeoutSeconds))
	line("  body_timeout_seconds          = %s", seconds(c.Server.BodyTimeoutSeconds))
	line("  idle_timeout_seconds          = %s", seconds(c.Server.IdleTimeoutSeconds))
	line("  write_timeout_seconds         = %s", seconds(c.Server.WriteTimeoutSeconds))
	if c.Server.MaxConnections == 0 {
		line("  max_connections               = auto (RLIMIT_NOFILE minus a reserve)")
	} else {
		line("  max_connections               = %d", c.Server.MaxConnections)
	}
	line("[commit]")
	line("  min_request_id_length         = %d", c.Commit.MinRequestIDLength)
	line("  request_id_retention_hours    = %d", c.Commit.RequestIDRetentionHours)
	line("  request_id_retention_versions = %d", c.Commit.RequestIDRetentionVersions)
	if c.Commit.MaxRequestIDs == 0 {
		line("  max_request_ids               = 0 (no cap: retention decides)")
	} else {
		line("  max_request_ids               = %d", c.Commit.MaxRequestIDs)
	}
	if c.Commit.PipelineWaitStrategy == WaitAuto {
		line("  pipeline_wait_strategy        = auto (%s)", c.Commit.WaitStrategy())
	} else {
		line("  pipeline_wait_strategy        = %s", c.Commit.PipelineWaitStrategy)
	}
	line("  pipeline_release_threads      = %d", c.Commit.PipelineReleaseThreads)
	line("  pipeline_cpus                 = %s", stageCPUList(c.Commit.PipelineCPUs))
	line("  pipeline_stage_waits          = %t", c.Commit.PipelineStageWaits)
	line("[subscription]")
	line("  max_buffer_size_bytes         = %d bytes", c.Subscription.MaxBufferSizeBytes)
	line("  keepalive_interval_seconds    = %d", c.Subscription.KeepaliveIntervalSeconds)
	line("  slow_consumer_grace_seconds   = %d", c.Subscription.SlowConsumerGraceSeconds)
	line("[benchmark]")
	line("  ok_resolve_iterations         = %d", c.Benchmark.OkResolveIterations)
	line("  ok_resolve_spin_ns            = %d ns", c.Benchmark.OkResolveSpinNs)
	line("  commit_resolve_spin_ns        = %d ns", c.Benchmark.CommitResolveSpinNs)
	line("  status_resolve_spin_ns        = %d ns", c.Benchmark.StatusResolveSpinNs)
	line("  commit_resolve_iterations     = %d", c.Benchmark.CommitResolveIterations)
	line("  status_resolve_iterations     = %d", c.Benchmark.StatusResolveIterations)
	line("  ok_body_bytes                 = %d bytes", c.Benchmark.OkBodyBytes)
	return b.String()
}

func seconds(s float64) string {
	if s == 0 {
		return "off"
	}
	return fmt.Sprintf("%g s", s)
}

func cpuList(cpus []int) string {
	if len(cpus) == 0 {
		return "unpinned"
	}
	return fmt.Sprint(cpus)
}

func stageCPUList(stages [][]int) string {
	if len(stages) == 0 {
		return "unpinned"
	}
	return fmt.Sprint(stages)
}
