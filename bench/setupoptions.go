package bench

import (
	"errors"
	"fmt"
	"time"

	"weaseldb/artifacts"
	"weaseldb/internal/serverproc"
	"weaseldb/server/config"
)

// SetupsOptions are the settings of `report setups`; its flags fill them and
// errors name those flags.
type SetupsOptions struct {
	Common           // IdleS is after each setup's last round; Plan prints both setups and the order of the runs
	Config    string // the seed's server config (testdata/test_benchmark_config.toml)
	Rounds    int
	DurationS float64 // measured load per run
	// The seed's load: load_tester's flags.
	Connections, RequestsPerConn, ConnectThreads, NetworkThreads int
	StatsIntervalS                                               float64
	// The spin work, timed and calibrated by bench_cpu_work once a round.
	WorkIterations int
	WorkTarget     time.Duration
	// SustainS > 0: after the rounds, each setup once more for SustainS s
	// without a break, the server sampled every SustainWindowS s.
	SustainS, SustainWindowS float64
	// StageWaits turns the servers' stage wait histogram on
	// (commit.pipeline_stage_waits), so the report shows where a request
	// waits; it costs the server instructions (docs/weaseldb.md "Metrics"),
	// so the rounds' throughput is then not comparable with a run without.
	StageWaits bool
	// RequireDedicated: fail before any run when the fitted setup gets
	// shared cores here, its plan and what it needs printed.
	RequireDedicated bool
}

// Validate checks the options (a simulated set implies Plan).
func (o *SetupsOptions) Validate() error {
	if o.AllowedCPUs != "" {
		o.Plan = true
	}
	switch {
	case o.Config == "":
		return errors.New("setups: --config FILE (the seed's server config) is required")
	case !o.Plan && o.RunDir == "":
		return errors.New("setups: --run DIR is required (or --plan)")
	case o.Rounds < 1:
		return fmt.Errorf("setups: --rounds must be at least 1, got %d", o.Rounds)
	case o.DurationS < 2:
		return fmt.Errorf("setups: --duration must be at least 2 s, got %g", o.DurationS)
	case o.WarmupS < 0 || o.IdleS < 1:
		return fmt.Errorf("setups: --warmup must be ≥ 0 and --idle ≥ 1, got %g and %g", o.WarmupS, o.IdleS)
	case o.DrainS < 0 || o.RequestTimeoutS < 0:
		return fmt.Errorf("setups: --drain and --request-timeout must be ≥ 0, got %g and %g", o.DrainS, o.RequestTimeoutS)
	case o.Connections < 1 || o.NetworkThreads < 1 || o.ConnectThreads < 1 || o.RequestsPerConn < 0 || o.IdleConns < 0:
		return errors.New("setups: --concurrency, --network-threads and --connect-threads must be ≥ 1; --requests-per-conn and --idle-conns ≥ 0")
	case o.StatsIntervalS <= 0:
		return fmt.Errorf("setups: --stats-interval must be > 0, got %g", o.StatsIntervalS)
	case o.WorkIterations < 1 || o.WorkTarget <= 0:
		return errors.New("setups: --work-iterations must be ≥ 1 and --work-target > 0")
	case o.SustainS < 0:
		return fmt.Errorf("setups: --sustain must be ≥ 0 (0: no sustained run), got %g", o.SustainS)
	case o.SustainS > 0 && (o.SustainWindowS <= 0 || o.SustainWindowS > o.SustainS):
		return fmt.Errorf("setups: --sustain-window must be > 0 and at most --sustain (%g s), got %g", o.SustainS, o.SustainWindowS)
	}
	return nil
}

// seedSetup reads the seed's config: its thread counts, wait strategy and
// work per request, with the seed's load beside them. doc is the config as
// written, for the runs' own copies.
func (o *SetupsOptions) seedSetup() (artifacts.Setup, map[string]any, error) {
	cfg, err := config.Load(o.Config)
	if err != nil {
		return artifacts.Setup{}, nil, fmt.Errorf("setups: --config: %w", err)
	}
	doc, err := readConfigDoc(o.Config)
	if err != nil {
		return artifacts.Setup{}, nil, fmt.Errorf("setups: --config: %w", err)
	}
	s := artifacts.Setup{Name: artifacts.SetupSeed, Title: "the seed's setup",
		IOThreads: cfg.Server.IOThreads, ReleaseThreads: cfg.Commit.PipelineReleaseThreads,
		WaitStrategy: cfg.Commit.WaitStrategy(), OkIterations: cfg.Benchmark.OkResolveIterations,
		LoadThreads: o.NetworkThreads, ConnectThreads: o.ConnectThreads, Connections: o.Connections,
		RequestsPerConn: o.RequestsPerConn, Cores: artifacts.CoresShared,
		Why: fmt.Sprintf("the seed's: %s as it is, the seed's load-tester flags, nothing pinned", o.Config)}
	if len(cfg.Server.IOCPUs) > 0 || len(cfg.Commit.PipelineCPUs) > 0 {
		s.Cores, s.IOCPUs, s.PipelineCPUs = artifacts.CoresDedicated, cfg.Server.IOCPUs, cfg.Commit.PipelineCPUs
		s.CPUPlan = "as pinned by " + o.Config
	}
	return s, doc, nil
}

// withStageWaits turns commit.pipeline_stage_waits on in a config document.
func withStageWaits(doc map[string]any) {
	commit, ok := doc["commit"].(map[string]any)
	if !ok {
		commit = map[string]any{}
		doc["commit"] = commit
	}
	commit["pipeline_stage_waits"] = true
}

// setupConfig is the config document a setup's servers read: the seed's
// config with a unix socket as its only listener (no fixed TCP port to
// collide on) and, for the fitted setup, its own threads and pinning.
func setupConfig(seedDoc map[string]any, s artifacts.Setup, socket string) (map[string]any, error) {
	doc := cloneDoc(seedDoc)
	if err := serverproc.SetInterfaces(doc, serverproc.UnixInterface(socket)); err != nil {
		return nil, err
	}
	if s.Name == artifacts.SetupSeed {
		return doc, nil
	}
	server := doc["server"].(map[string]any) // SetInterfaces made it a table
	commit, ok := doc["commit"].(map[string]any)
	if !ok {
		commit = map[string]any{}
		doc["commit"] = commit
	}
	server["io_threads"] = s.IOThreads
	// server.thread_names stays at the server's "auto": on shared cores
	// the stages run as goroutines on their loop's thread (FitSetup's Why
	// says so); dedicated cores pin, and so name, them all.
	commit["pipeline_release_threads"] = s.ReleaseThreads
	commit["pipeline_wait_strategy"] = s.WaitStrategy
	delete(server, "io_cpus")
	delete(commit, "pipeline_cpus")
	if len(s.IOCPUs) > 0 {
		server["io_cpus"] = s.IOCPUs
	}
	if len(s.PipelineCPUs) > 0 {
		commit["pipeline_cpus"] = s.PipelineCPUs
	}
	return doc, nil
}

// cloneDoc copies the tables of a config document (values are not shared
// mutable state: they are replaced, never changed in place).
func cloneDoc(doc map[string]any) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		if t, ok := v.(map[string]any); ok {
			v = cloneDoc(t)
		}
		out[k] = v
	}
	return out
}
