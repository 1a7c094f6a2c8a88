package loadtester

import (
	"encoding/json"
	"runtime"
	"testing"
	"time"
	"weaseldb/loadtester/result"
)

// The result's "config" object is the effective config under its json
// tags. The golden lines are what the hand-kept map written before issue 25
// produced for the same configs (gomaxprocs and cpus aside, which are the
// machine's), byte for byte: the keys sorted, durations in seconds, the
// drain as effective, a unix socket without host and port, network threads
// cut to the connections, start_at in UTC and only when set, headers null
// when none were given. Since issue 28 an open loop's config also has
// send_slack_s (the closed loop's has none).
func TestConfigRecord(t *testing.T) {
	full := DefaultConfig()
	full.UnixSocket = "/tmp/w.sock"
	full.Headers = []string{"Content-Type: application/json", "X: {{seq}}"}
	full.Body = []byte(`{"request_id":"{{uuid}}"}`)
	full.Method, full.Path = "POST", "/v1/commit?x=1"
	full.Rate, full.Warmup, full.Drain, full.Timeout = 2500.5, 1500*time.Millisecond, 30*time.Second, 2*time.Second
	full.StartAt = time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.FixedZone("x", 3600))
	full.MaxErrors, full.Instance, full.VegetaMax = 7, "pod-1", 64
	full.NetworkThreads, full.Concurrency, full.Pipeline, full.RequestsPerConn, full.ConnectThreads = 8, 3, 16, 500, 2
	full.StatsInterval, full.ConnectTimeout, full.Duration = 250*time.Millisecond, 500*time.Millisecond, 120*time.Second
	full.OnInterval = func(result.IntervalReport) {}
	bodyFile := DefaultConfig()
	bodyFile.Host, bodyFile.Port = "::1", 80
	bodyFile.BodyFile, bodyFile.Body, bodyFile.Headers = "body.json", []byte("0123456789"), []string{}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"defaults", DefaultConfig(),
			`{"body_bytes":0,"concurrency":100,"connect_threads":1,"connect_timeout_s":3,"drain_s":1,"duration_s":10,"headers":null,"host":"127.0.0.1","max_errors":0,"method":"GET","network_threads":1,"path":"/ok","pipeline":1,"port":8080,"rate":0,"requests_per_conn":0,"stats_interval_s":1,"timeout_s":10,"warmup_s":0}`},
		{"everything set, unix socket", full,
			`{"body_bytes":25,"concurrency":3,"connect_threads":2,"connect_timeout_s":0.5,"drain_s":2,"duration_s":120,"headers":["Content-Type: application/json","X: {{seq}}"],"max_errors":7,"method":"POST","network_threads":3,"path":"/v1/commit?x=1","pipeline":16,"rate":2500.5,"requests_per_conn":500,"send_slack_s":0.0001,"start_at":"2026-12-01T09:00:00.123456789Z","stats_interval_s":0.25,"timeout_s":2,"unix_socket":"/tmp/w.sock","warmup_s":1.5}`},
		{"body file, port 80", bodyFile,
			`{"body_bytes":10,"body_file":"body.json","concurrency":100,"connect_threads":1,"connect_timeout_s":3,"drain_s":1,"duration_s":10,"headers":[],"host":"::1","max_errors":0,"method":"GET","network_threads":1,"path":"/ok","pipeline":1,"port":80,"rate":0,"requests_per_conn":0,"stats_interval_s":1,"timeout_s":10,"warmup_s":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eff := tt.cfg.effective()
			m := eff.resultRecord()
			if m["gomaxprocs"] != runtime.GOMAXPROCS(0) || m["cpus"] != runtime.NumCPU() {
				t.Errorf("gomaxprocs %v, cpus %v: want this process's", m["gomaxprocs"], m["cpus"])
			}
			delete(m, "gomaxprocs")
			delete(m, "cpus")
			got, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("config object\n got %s\nwant %s", got, tt.want)
			}
			// Encoding a Config writes the same object (without what only
			// a run knows).
			direct, err := json.Marshal(eff)
			if err != nil {
				t.Fatal(err)
			}
			delete(m, "body_bytes")
			if want, _ := json.Marshal(m); string(direct) != string(want) {
				t.Errorf("json.Marshal(Config)\n got %s\nwant %s", direct, want)
			}
		})
	}
}
