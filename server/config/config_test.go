package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// parseErrors parses src and returns the error keys and the full message.
func parseErrors(t *testing.T, src string) ([]string, string) {
	t.Helper()
	_, err := Parse([]byte(src))
	if err == nil {
		return nil, ""
	}
	var errs Errors
	if !errors.As(err, &errs) {
		return []string{"<not Errors>"}, err.Error()
	}
	keys := make([]string, len(errs))
	for i, fe := range errs {
		keys[i] = fe.Key
	}
	return keys, err.Error()
}

func TestDefaultIsValid(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("Default() invalid: %v", err)
	}
	got, err := Parse(nil)
	if err != nil {
		t.Fatalf("Parse(empty): %v", err)
	}
	if !reflect.DeepEqual(got, Default()) {
		t.Fatalf("Parse(empty) = %+v, want Default()", got)
	}
}

// intKey describes one integer option and its inclusive bounds; hi < 0
// means unbounded above.
type intKey struct {
	section, name string
	lo, hi        int64
	get           func(Config) int64
}

var intKeys = []intKey{
	{"server", "io_threads", 1, 1024, func(c Config) int64 { return int64(c.Server.IOThreads) }},
	{"server", "event_batch_size", 1, 65536, func(c Config) int64 { return int64(c.Server.EventBatchSize) }},
	{"server", "io_uring_peek_ns", 0, 1_000_000, func(c Config) int64 { return int64(c.Server.IOUringPeekNs) }},
	{"server", "io_uring_round_budget", 0, 65536, func(c Config) int64 { return int64(c.Server.IOUringRoundBudget) }},
	{"server", "read_buffer_size", 1024, 16 << 20, func(c Config) int64 { return int64(c.Server.ReadBufferSize) }},
	{"server", "max_connections", 0, 1 << 24, func(c Config) int64 { return int64(c.Server.MaxConnections) }},
	{"server", "max_request_size_bytes", 1024, 1 << 30, func(c Config) int64 { return c.Server.MaxRequestSizeBytes }},
	{"commit", "min_request_id_length", 8, 256, func(c Config) int64 { return int64(c.Commit.MinRequestIDLength) }},
	{"commit", "request_id_retention_hours", 1, 8760, func(c Config) int64 { return int64(c.Commit.RequestIDRetentionHours) }},
	{"commit", "request_id_retention_versions", 1, -1, func(c Config) int64 { return c.Commit.RequestIDRetentionVersions }},
	{"commit", "pipeline_release_threads", 1, 64, func(c Config) int64 { return int64(c.Commit.PipelineReleaseThreads) }},
	{"subscription", "max_buffer_size_bytes", 1, -1, func(c Config) int64 { return c.Subscription.MaxBufferSizeBytes }},
	{"subscription", "keepalive_interval_seconds", 1, 3600, func(c Config) int64 { return int64(c.Subscription.KeepaliveIntervalSeconds) }},
	{"subscription", "slow_consumer_grace_seconds", 0, 3600, func(c Config) int64 { return int64(c.Subscription.SlowConsumerGraceSeconds) }},
	{"benchmark", "ok_resolve_iterations", 0, 100_000_000, func(c Config) int64 { return int64(c.Benchmark.OkResolveIterations) }},
	{"benchmark", "ok_resolve_spin_ns", 0, 1_000_000_000, func(c Config) int64 { return c.Benchmark.OkResolveSpinNs }},
	{"benchmark", "commit_resolve_spin_ns", 0, 1_000_000_000, func(c Config) int64 { return c.Benchmark.CommitResolveSpinNs }},
	{"benchmark", "status_resolve_spin_ns", 0, 1_000_000_000, func(c Config) int64 { return c.Benchmark.StatusResolveSpinNs }},
	{"benchmark", "commit_resolve_iterations", 0, 100_000_000, func(c Config) int64 { return int64(c.Benchmark.CommitResolveIterations) }},
	{"benchmark", "status_resolve_iterations", 0, 100_000_000, func(c Config) int64 { return int64(c.Benchmark.StatusResolveIterations) }},
	{"benchmark", "ok_body_bytes", 15, 16 << 20, func(c Config) int64 { return int64(c.Benchmark.OkBodyBytes) }},
}

func TestIntegerBounds(t *testing.T) {
	for _, k := range intKeys {
		key := k.section + "." + k.name
		type tc struct {
			value   string
			wantErr string // substring; "" = valid
		}
		rangeMsg := fmt.Sprintf("must be between %d and %d", k.lo, k.hi)
		if k.hi < 0 {
			rangeMsg = "must be greater than 0"
		}
		cases := []tc{
			{fmt.Sprint(k.lo), ""},
			{fmt.Sprint(k.lo - 1), rangeMsg},
			{`"12"`, "must be an integer, got string"},
			{"1.5", "must be an integer, got float"},
			{"true", "must be an integer, got boolean"},
			{"[1]", "must be an integer, got array"},
		}
		if k.hi >= 0 {
			cases = append(cases, tc{fmt.Sprint(k.hi), ""}, tc{fmt.Sprint(k.hi + 1), rangeMsg})
		} else {
			cases = append(cases, tc{"9223372036854775807", ""})
		}
		for _, c := range cases {
			t.Run(key+"="+c.value, func(t *testing.T) {
				src := fmt.Sprintf("[%s]\n%s = %s\n", k.section, k.name, c.value)
				cfg, err := Parse([]byte(src))
				if c.wantErr == "" {
					if err != nil {
						t.Fatalf("unexpected error: %v", err)
					}
					if got := fmt.Sprint(k.get(cfg)); got != c.value {
						t.Fatalf("value = %s, want %s", got, c.value)
					}
					return
				}
				keys, msg := parseErrors(t, src)
				if !reflect.DeepEqual(keys, []string{key}) {
					t.Fatalf("error keys = %v, want [%s] (%s)", keys, key, msg)
				}
				if !strings.Contains(msg, key+": "+c.wantErr) {
					t.Fatalf("error %q does not contain %q", msg, key+": "+c.wantErr)
				}
			})
		}
	}
}

// commit.max_request_ids is 0 (no cap, the default) or a cap in
// 1024..2^30; the error names the key and both.
func TestMaxRequestIDs(t *testing.T) {
	if d := Default().Commit.MaxRequestIDs; d != 0 {
		t.Fatalf("default %d, want 0 (no cap)", d)
	}
	const rangeMsg = "commit.max_request_ids: must be 0 (no cap) or between 1024 and 1073741824, got "
	for _, c := range []struct {
		value   string
		want    int
		wantErr string // whole message; "" = valid
	}{
		{"0", 0, ""},
		{"1024", 1024, ""},
		{"1048576", 1 << 20, ""},
		{"1073741824", 1 << 30, ""},
		{"1", 0, rangeMsg + "1"},
		{"1023", 0, rangeMsg + "1023"},
		{"-1", 0, rangeMsg + "-1"},
		{"1073741825", 0, rangeMsg + "1073741825"},
		{`"0"`, 0, "commit.max_request_ids: must be an integer, got string"},
	} {
		t.Run(c.value, func(t *testing.T) {
			src := "[commit]\nmax_request_ids = " + c.value + "\n"
			cfg, err := Parse([]byte(src))
			if c.wantErr == "" {
				if err != nil || cfg.Commit.MaxRequestIDs != c.want {
					t.Fatalf("got %d, %v; want %d", cfg.Commit.MaxRequestIDs, err, c.want)
				}
				return
			}
			if keys, msg := parseErrors(t, src); !reflect.DeepEqual(keys, []string{"commit.max_request_ids"}) || msg != c.wantErr {
				t.Fatalf("error %q (keys %v), want %q", msg, keys, c.wantErr)
			}
		})
	}
}

func TestTimeoutSeconds(t *testing.T) {
	keys := map[string]func(Config) float64{
		"header_timeout_seconds": func(c Config) float64 { return c.Server.HeaderTimeoutSeconds },
		"body_timeout_seconds":   func(c Config) float64 { return c.Server.BodyTimeoutSeconds },
		"idle_timeout_seconds":   func(c Config) float64 { return c.Server.IdleTimeoutSeconds },
		"write_timeout_seconds":  func(c Config) float64 { return c.Server.WriteTimeoutSeconds },
	}
	for name, get := range keys {
		key := "server." + name
		for _, tc := range []struct {
			value   string
			want    float64
			wantErr string
		}{
			{"0", 0, ""},
			{"0.25", 0.25, ""},
			{"10", 10, ""},
			{"86400", 86400, ""},
			{"-1", 0, "must be between 0 (off) and 86400 seconds, got -1"},
			{"86400.5", 0, "must be between 0 (off) and 86400 seconds"},
			{"nan", 0, "must be between 0 (off) and 86400 seconds, got NaN"},
			{"inf", 0, "must be between 0 (off) and 86400 seconds, got +Inf"},
			{`"10s"`, 0, "must be a number of seconds, got string"},
			{"true", 0, "must be a number of seconds, got boolean"},
		} {
			t.Run(key+"="+tc.value, func(t *testing.T) {
				src := fmt.Sprintf("[server]\n%s = %s\n", name, tc.value)
				cfg, err := Parse([]byte(src))
				if tc.wantErr == "" {
					if err != nil || get(cfg) != tc.want {
						t.Fatalf("got %v, %v; want %v", get(cfg), err, tc.want)
					}
					return
				}
				keys, msg := parseErrors(t, src)
				if !reflect.DeepEqual(keys, []string{key}) || !strings.Contains(msg, key+": "+tc.wantErr) {
					t.Fatalf("error %q (keys %v), want %q", msg, keys, key+": "+tc.wantErr)
				}
			})
		}
	}
}

func TestTimeoutDefaults(t *testing.T) {
	s := Default().Server
	if s.HeaderTimeoutSeconds != 10 || s.BodyTimeoutSeconds != 30 || s.IdleTimeoutSeconds != 60 || s.WriteTimeoutSeconds != 30 || s.MaxConnections != 0 {
		t.Fatalf("defaults %+v", s)
	}
}

func TestWaitStrategy(t *testing.T) {
	for _, s := range WaitStrategies {
		cfg, err := Parse([]byte(fmt.Sprintf("[commit]\npipeline_wait_strategy = %q\n", s)))
		if err != nil || cfg.Commit.PipelineWaitStrategy != s {
			t.Fatalf("%s: cfg=%q err=%v", s, cfg.Commit.PipelineWaitStrategy, err)
		}
	}
	_, msg := parseErrors(t, "[commit]\npipeline_wait_strategy = \"Sometimes\"\n")
	want := `commit.pipeline_wait_strategy: must be one of "auto", "WaitIfStageEmpty", "WaitIfUpstreamIdle", "Never", got "Sometimes"`
	if msg != want {
		t.Fatalf("got %q, want %q", msg, want)
	}
	_, msg = parseErrors(t, "[commit]\npipeline_wait_strategy = 3\n")
	if msg != "commit.pipeline_wait_strategy: must be a string, got integer" {
		t.Fatalf("got %q", msg)
	}
}

func TestIOBackend(t *testing.T) {
	if Default().Server.IOBackend != IOBackendEpoll {
		t.Fatalf("default io_backend %q, want epoll", Default().Server.IOBackend)
	}
	for _, b := range IOBackends {
		cfg, err := Parse([]byte(fmt.Sprintf("[server]\nio_backend = %q\n", b)))
		if err != nil || cfg.Server.IOBackend != b {
			t.Fatalf("%s: cfg=%q err=%v", b, cfg.Server.IOBackend, err)
		}
	}
	_, msg := parseErrors(t, "[server]\nio_backend = \"kqueue\"\n")
	if want := `server.io_backend: must be one of "epoll", "io_uring", got "kqueue"`; msg != want {
		t.Fatalf("got %q, want %q", msg, want)
	}
}

func TestListenerKey(t *testing.T) {
	if Default().Server.Listener != ListenerShared {
		t.Fatalf("default listener %q, want shared", Default().Server.Listener)
	}
	for _, m := range ListenerModes {
		cfg, err := Parse([]byte(fmt.Sprintf("[server]\nlistener = %q\n", m)))
		if err != nil || cfg.Server.Listener != m {
			t.Fatalf("%s: cfg=%q err=%v", m, cfg.Server.Listener, err)
		}
	}
	_, msg := parseErrors(t, "[server]\nlistener = \"per-loop\"\n")
	if want := `server.listener: must be one of "shared", "reuseport", got "per-loop"`; msg != want {
		t.Fatalf("got %q, want %q", msg, want)
	}
}

func TestThreadNamesKey(t *testing.T) {
	if got := Default().Server.ThreadNames; got != ThreadNamesAuto {
		t.Fatalf("thread_names %q by default, want auto", got)
	}
	for _, tc := range []struct {
		value            string
		want             ThreadNames
		lockAll, unnamed bool
	}{
		{"true", ThreadNamesOn, true, false},
		{"false", ThreadNamesOff, false, true},
		{`"auto"`, ThreadNamesAuto, false, false},
	} {
		cfg, err := Parse([]byte("[server]\nthread_names = " + tc.value + "\n"))
		if err != nil || cfg.Server.ThreadNames != tc.want {
			t.Fatalf("thread_names = %s: %q %v, want %q", tc.value, cfg.Server.ThreadNames, err, tc.want)
		}
		if n := cfg.Server.ThreadNames; n.LockAll() != tc.lockAll || n.Unnamed() != tc.unnamed {
			t.Errorf("thread_names = %s: LockAll %v Unnamed %v", tc.value, n.LockAll(), n.Unnamed())
		}
	}
	for value, want := range map[string]string{
		"1":        "server.thread_names: must be true, false or \"auto\", got integer",
		`"yes"`:    `server.thread_names: must be true, false or "auto", got "yes"`,
		`"true"`:   `server.thread_names: must be true, false or "auto", got "true"`,
		`["auto"]`: "server.thread_names: must be true, false or \"auto\", got array",
	} {
		if _, msg := parseErrors(t, "[server]\nthread_names = "+value+"\n"); msg != want {
			t.Errorf("thread_names = %s: got %q, want %q", value, msg, want)
		}
	}
}

func TestAdminAddress(t *testing.T) {
	if Default().Server.AdminAddress != "" {
		t.Fatalf("default admin_address %q, want off", Default().Server.AdminAddress)
	}
	for _, tc := range []struct{ addr, wantErr string }{
		{"127.0.0.1:6060", ""},
		{"[::1]:0", ""},
		{":6060", ""},
		{"localhost:65535", ""},
		{"127.0.0.1", `server.admin_address: must be "" (off) or "HOST:PORT", got "127.0.0.1"`},
		{"127.0.0.1:x", "with a port between 0 and 65535"},
		{"127.0.0.1:65536", "with a port between 0 and 65535"},
		{"127.0.0.1:-1", "with a port between 0 and 65535"},
	} {
		src := fmt.Sprintf("[server]\nadmin_address = %q\n", tc.addr)
		cfg, err := Parse([]byte(src))
		if tc.wantErr == "" {
			if err != nil || cfg.Server.AdminAddress != tc.addr {
				t.Fatalf("%s: cfg=%q err=%v", tc.addr, cfg.Server.AdminAddress, err)
			}
			continue
		}
		if _, msg := parseErrors(t, src); !strings.Contains(msg, tc.wantErr) {
			t.Fatalf("%s: error %q, want %q", tc.addr, msg, tc.wantErr)
		}
	}
}

func TestErrorsTable(t *testing.T) {
	cases := []struct {
		name     string
		src      string
		wantKeys []string
		wantMsg  string // substring of the whole message
	}{
		{"unknown key", "[server]\nio_thread = 2\n", []string{"server.io_thread"}, "unknown key; allowed keys in [server]: interfaces, io_threads"},
		{"unknown section", "[serve]\nio_threads = 2\n", []string{"serve"}, "allowed sections: server, commit, subscription, benchmark"},
		{"unknown top-level key", "io_threads = 2\n", []string{"io_threads"}, "unknown section or key"},
		{"section not a table", "server = 3\n", []string{"server"}, "must be a table ([server]), got integer"},
		{"all errors collected", "[server]\nio_threads = 0\nevent_batch_size = \"x\"\nbogus = 1\n[commit]\npipeline_release_threads = 65\n",
			[]string{"server.event_batch_size", "server.bogus", "server.io_threads", "commit.pipeline_release_threads"},
			"commit.pipeline_release_threads: must be between 1 and 64, got 65"},
		{"invalid toml", "[server\n", nil, "invalid TOML"},
		{"empty interfaces", "[server]\ninterfaces = []\n", []string{"server.interfaces"}, "at least one interface"},
		{"interfaces not array", "[server]\ninterfaces = 3\n", []string{"server.interfaces"}, "must be an array, got integer"},
		{"interface not table", "[server]\ninterfaces = [3]\n", []string{"server.interfaces[0]"}, "must be a table"},
		{"interface bad type", `[server]
interfaces = [{ type = "udp", address = "x", port = 1 }]`, []string{"server.interfaces[0].type"}, `must be one of "tcp", "unix", got "udp"`},
		{"interface missing type", `[server]
interfaces = [{ address = "x", port = 1 }]`, []string{"server.interfaces[0].type"}, "is required"},
		{"tcp missing address", `[server]
interfaces = [{ type = "tcp", port = 1 }]`, []string{"server.interfaces[0].address"}, "is required for a tcp interface"},
		{"tcp port too big", `[server]
interfaces = [{ type = "tcp", address = "127.0.0.1", port = 65536 }]`, []string{"server.interfaces[0].port"}, "must be between 0 and 65535 (0 = ephemeral), got 65536"},
		{"tcp negative port", `[server]
interfaces = [{ type = "tcp", address = "127.0.0.1", port = -1 }]`, []string{"server.interfaces[0].port"}, "got -1"},
		{"tcp port string", `[server]
interfaces = [{ type = "tcp", address = "127.0.0.1", port = "80" }]`, []string{"server.interfaces[0].port"}, "must be an integer, got string"},
		{"tcp with path", `[server]
interfaces = [{ type = "tcp", address = "127.0.0.1", port = 1, path = "p" }]`, []string{"server.interfaces[0].path"}, "only allowed for a unix interface"},
		{"unix missing path", `[server]
interfaces = [{ type = "unix" }]`, []string{"server.interfaces[0].path"}, "is required for a unix interface"},
		{"unix with port", `[server]
interfaces = [{ type = "unix", path = "a.sock", port = 3 }]`, []string{"server.interfaces[0]"}, "only allowed for a tcp interface"},
		{"unix path too long", "[server]\ninterfaces = [{ type = \"unix\", path = \"" + strings.Repeat("a", 108) + "\" }]",
			[]string{"server.interfaces[0].path"}, "at most 107 bytes"},
		{"interface unknown key", `[server]
interfaces = [{ type = "unix", path = "a.sock", mode = 1 }]`, []string{"server.interfaces[0].mode"}, "allowed keys: type, address, port, path"},
		{"io_cpus wrong length", "[server]\nio_threads = 2\nio_cpus = [1]\n", []string{"server.io_cpus"}, "one CPU per I/O thread (io_threads = 2) or be empty, got 1"},
		{"io_cpus negative", "[server]\nio_cpus = [-1]\n", []string{"server.io_cpus[0]"}, "must be a CPU number between 0 and 65535, got -1"},
		{"io_cpus element type", "[server]\nio_cpus = [\"1\"]\n", []string{"server.io_cpus[0]"}, "must be an integer, got string"},
		{"io_cpus not array", "[server]\nio_cpus = 1\n", []string{"server.io_cpus"}, "must be an array, got integer"},
		{"pipeline_cpus wrong count", "[commit]\npipeline_cpus = [[1], [2]]\n", []string{"commit.pipeline_cpus"}, "must list 4 CPU lists"},
		{"pipeline_cpus release length", "[commit]\npipeline_release_threads = 2\npipeline_cpus = [[1], [2], [3], [4]]\n",
			[]string{"commit.pipeline_cpus[3]"}, "one CPU per thread of stage 3 (2), got 1"},
		{"pipeline_cpus stage length", "[commit]\npipeline_cpus = [[1, 2], [2], [3], [4]]\n", []string{"commit.pipeline_cpus[0]"}, "stage 0 (1), got 2"},
		{"pipeline_cpus negative", "[commit]\npipeline_cpus = [[1], [-2], [3], [4]]\n", []string{"commit.pipeline_cpus[1][0]"}, "got -2"},
		{"pipeline_cpus inner not array", "[commit]\npipeline_cpus = [1, [2], [3], [4]]\n", []string{"commit.pipeline_cpus[0]"}, "must be an array, got integer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			keys, msg := parseErrors(t, c.src)
			if c.wantKeys != nil && !reflect.DeepEqual(keys, c.wantKeys) {
				t.Fatalf("keys = %v, want %v\n%s", keys, c.wantKeys, msg)
			}
			if msg == "" || !strings.Contains(msg, c.wantMsg) {
				t.Fatalf("message %q does not contain %q", msg, c.wantMsg)
			}
		})
	}
}

func TestValidConfigs(t *testing.T) {
	src := `
[server]
interfaces = [
  { type = "tcp", address = "127.0.0.1", port = 0 },
  { type = "unix", path = "/tmp/x.sock" },
]
io_threads = 2
io_cpus = [0, 1]
[commit]
pipeline_release_threads = 2
pipeline_cpus = [[0], [1], [0], [1, 0]]
`
	cfg, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Interface{{Type: "tcp", Address: "127.0.0.1"}, {Type: "unix", Path: "/tmp/x.sock"}}
	if !reflect.DeepEqual(cfg.Server.Interfaces, want) {
		t.Fatalf("interfaces = %+v", cfg.Server.Interfaces)
	}
	if !reflect.DeepEqual(cfg.Server.IOCPUs, []int{0, 1}) || !reflect.DeepEqual(cfg.Commit.PipelineCPUs, [][]int{{0}, {1}, {0}, {1, 0}}) {
		t.Fatalf("cpus = %v %v", cfg.Server.IOCPUs, cfg.Commit.PipelineCPUs)
	}

	// The array-of-tables form is accepted too.
	cfg, err = Parse([]byte("[[server.interfaces]]\ntype = \"unix\"\npath = \"a.sock\"\n"))
	if err != nil || len(cfg.Server.Interfaces) != 1 || cfg.Server.Interfaces[0].Path != "a.sock" {
		t.Fatalf("array of tables: %+v %v", cfg.Server.Interfaces, err)
	}
}

func TestTestdataConfigs(t *testing.T) {
	bench, err := Load(filepath.Join("..", "..", "testdata", "test_benchmark_config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	wantIfaces := []Interface{{Type: "tcp", Address: "0.0.0.0", Port: 8123}, {Type: "unix", Path: "weaseldb.sock"}}
	if !reflect.DeepEqual(bench.Server.Interfaces, wantIfaces) || bench.Benchmark.OkResolveIterations != 4000 ||
		bench.Server.IOThreads != 8 || bench.Commit.PipelineWaitStrategy != WaitIfUpstreamIdle {
		t.Fatalf("test_benchmark_config.toml: %+v", bench)
	}
	def, err := Load(filepath.Join("..", "..", "testdata", "default.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if def.Server.Interfaces[0] != (Interface{Type: "tcp", Address: "127.0.0.1", Port: 8080}) ||
		def.Commit.PipelineWaitStrategy != WaitIfStageEmpty || def.Server.IOThreads != 1 {
		t.Fatalf("default.toml: %+v", def)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing.toml")); err == nil || !strings.Contains(err.Error(), "missing.toml") {
		t.Fatalf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[server]\nio_threads = 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(bad)
	var errs Errors
	if err == nil || !strings.Contains(err.Error(), bad) || !errors.As(err, &errs) || errs[0].Key != "server.io_threads" {
		t.Fatalf("bad file: %v", err)
	}
}

// TestWaitStrategyAuto: the default spins only where every pipeline thread
// has a CPU of its own; an explicit strategy is kept as written.
func TestWaitStrategyAuto(t *testing.T) {
	pinned := [][]int{{0}, {1}, {2}, {3}}
	for _, tc := range []struct {
		key  string
		cpus [][]int
		want string
	}{
		{WaitAuto, nil, WaitIfStageEmpty},
		{WaitAuto, pinned, WaitIfUpstreamIdle},
		{WaitIfUpstreamIdle, nil, WaitIfUpstreamIdle},
		{WaitIfStageEmpty, pinned, WaitIfStageEmpty},
		{WaitNever, nil, WaitNever},
	} {
		c := Default().Commit
		c.PipelineWaitStrategy, c.PipelineCPUs = tc.key, tc.cpus
		if got := c.WaitStrategy(); got != tc.want {
			t.Errorf("%s with pipeline_cpus %v: got %s, want %s", tc.key, tc.cpus, got, tc.want)
		}
	}
	if Default().Commit.PipelineWaitStrategy != WaitAuto {
		t.Errorf("default pipeline_wait_strategy = %q, want %q", Default().Commit.PipelineWaitStrategy, WaitAuto)
	}
	c := Default()
	if s := c.Summary(); !strings.Contains(s, "pipeline_wait_strategy        = auto (WaitIfStageEmpty)") {
		t.Errorf("summary of the default does not name what auto resolved to:\n%s", s)
	}
}

func TestSummary(t *testing.T) {
	c := Default()
	c.Server.Interfaces = append(c.Server.Interfaces, Interface{Type: "unix", Path: "w.sock"})
	c.Commit.PipelineCPUs = [][]int{{0}, {1}, {2}, {3}}
	s := c.Summary()
	for _, want := range []string{
		"[server]", "interfaces[0]                 = tcp:127.0.0.1:8080", "interfaces[1]                 = unix:w.sock",
		"io_cpus                       = unpinned", "pipeline_cpus                 = [[0] [1] [2] [3]]",
		"pipeline_wait_strategy        = auto (WaitIfUpstreamIdle)", "ok_resolve_iterations         = 0", "[benchmark]",
		"ok_resolve_spin_ns            = 0 ns", "commit_resolve_spin_ns        = 0 ns",
		"status_resolve_spin_ns        = 0 ns", "commit_resolve_iterations     = 0", "status_resolve_iterations     = 0",
		"ok_body_bytes                 = 15 bytes", "admin_address                 = off", "thread_names                  = auto", "listener                      = shared",
		"max_request_ids               = 0 (no cap: retention decides)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	c.Commit.MaxRequestIDs = 4096
	if want := "max_request_ids               = 4096\n"; !strings.Contains(c.Summary(), want) {
		t.Errorf("summary lacks %q:\n%s", want, c.Summary())
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"default.toml", "test_benchmark_config.toml"} {
		if data, err := os.ReadFile(filepath.Join("..", "..", "testdata", name)); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("[server]\ninterfaces = [1, {type=\"tcp\"}, [2]]\nio_cpus=[[1]]\n[commit]\npipeline_cpus=[[],[[1]],3]\n"))
	f.Add([]byte("[[server.interfaces]]\ntype = 1\n[benchmark]\nok_resolve_iterations = 1979-05-27\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
		if err != nil {
			return
		}
		// Whatever parses must validate and summarise.
		if verr := cfg.Validate(); verr != nil {
			t.Fatalf("Parse accepted an invalid config: %v", verr)
		}
		_ = cfg.Summary()
	})
}

// commit.pipeline_stage_waits takes a boolean, off by default; anything
// else is refused with the key named.
func TestPipelineStageWaits(t *testing.T) {
	if Default().Commit.PipelineStageWaits {
		t.Error("pipeline_stage_waits is on by default")
	}
	c, err := Parse([]byte("[commit]\npipeline_stage_waits = true\n"))
	if err != nil || !c.Commit.PipelineStageWaits {
		t.Errorf("true: %v, %v", c.Commit.PipelineStageWaits, err)
	}
	if _, err := Parse([]byte("[commit]\npipeline_stage_waits = 1\n")); err == nil || !strings.Contains(err.Error(), "commit.pipeline_stage_waits") {
		t.Errorf("1: %v, want an error naming commit.pipeline_stage_waits", err)
	}
}
