package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		check   func(options) bool
		wantErr string
	}{
		{"seed flags", strings.Fields("--unix-socket w.sock --concurrency 2000 --requests-per-conn 500 --connect-threads 2 --network-threads 10 --duration 120 --stats-interval 1"),
			func(o options) bool {
				c := o.cfg
				return c.UnixSocket == "w.sock" && c.Concurrency == 2000 && c.RequestsPerConn == 500 && c.ConnectThreads == 2 &&
					c.NetworkThreads == 10 && c.Duration == 120*time.Second && c.StatsInterval == time.Second
			}, ""},
		{"url", []string{"--url", "http://127.0.0.1:9000/v1/status?request_id=x"},
			func(o options) bool {
				c := o.cfg
				return c.Host == "127.0.0.1" && c.Port == 9000 && c.Path == "/v1/status?request_id=x"
			}, ""},
		{"durations", strings.Fields("--duration 500ms --warmup 0.5 --timeout 2s"),
			func(o options) bool {
				c := o.cfg
				return c.Duration == 500*time.Millisecond && c.Warmup == 500*time.Millisecond && c.Timeout == 2*time.Second
			}, ""},
		{"headers repeat", []string{"--header", "A: 1", "--header", "B: 2", "--pipeline", "16", "--rate", "1000"},
			func(o options) bool {
				c := o.cfg
				return len(c.Headers) == 2 && c.Pipeline == 16 && c.Rate == 1000
			}, ""},
		{"bad concurrency", []string{"--concurrency", "0"}, nil, "--concurrency"},
		{"bad header", []string{"--header", "nocolon"}, nil, "--header"},
		{"https", []string{"--url", "https://x/", "--insecure", "--sni", "y", "--tls-resume"},
			func(o options) bool {
				c := o.cfg
				return c.TLS != nil && c.TLS.Insecure && c.TLS.ServerName == "y" && c.TLS.Resume && c.Port == 443 && c.Host == "x"
			}, ""},
		{"tls flag over http", []string{"--url", "http://x/", "--insecure"}, nil, "only with an https:// --url"},
		{"other scheme", []string{"--url", "ftp://x/"}, nil, "want http:// or https://"},
		{"threshold", []string{"--threshold", "p99<5ms", "--threshold", "errors<1%"},
			func(o options) bool { return len(o.cfg.Thresholds) == 2 && o.cfg.Thresholds[1].Percent }, ""},
		{"bad threshold", []string{"--threshold", "p99=5ms"}, nil, `"p99=5ms"`},
		{"unknown flag", []string{"--bogus"}, nil, "bogus"},
		{"bad duration", []string{"--duration", "soon"}, nil, "duration"},
		{"body twice", []string{"--body", "x", "--body-file", "f"}, nil, "--body"},
		{"start-at relative", []string{"--start-at", "+10s", "--instance", "pod-3"},
			func(o options) bool {
				c := o.cfg
				d := time.Until(c.StartAt)
				return d > 9*time.Second && d <= 10*time.Second && c.Instance == "pod-3"
			}, ""},
		{"start-at absolute", []string{"--start-at", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)},
			func(o options) bool {
				c := o.cfg
				d := time.Until(c.StartAt)
				return d > 59*time.Minute && d <= time.Hour
			}, ""},
		{"start-at past", []string{"--start-at", "2020-01-01T00:00:00Z"}, nil, "already past"},
		{"start-at too far", []string{"--start-at", "+48h"}, nil, "more than 24h0m0s ahead"},
		{"start-at garbage", []string{"--start-at", "soon"}, nil, "want RFC 3339"},
		{"start-at local time without zone", []string{"--start-at", "2030-01-01T10:00:00"}, nil, "want RFC 3339"},
		{"outputs", strings.Fields("--json r.json --hdr-log r.hlog --vegeta r.bin --vegeta-max 64 --quiet"),
			func(o options) bool {
				return o.jsonPath == "r.json" && o.hdrLog == "r.hlog" && o.vegeta == "r.bin" && o.cfg.VegetaMax == 64 && o.quiet
			}, ""},
		{"no --vegeta: no results kept", strings.Fields("--vegeta-max 64"),
			func(o options) bool { return o.cfg.VegetaMax == 0 && o.vegetaMax == 64 }, ""},
		{"bad vegeta-max", strings.Fields("--vegeta-max 0"), nil, "--vegeta-max 0: want >= 1"},
		{"body", []string{"--body", "x{{seq}}"}, func(o options) bool { return string(o.cfg.Body) == "x{{seq}}" }, ""},
		{"send slack", strings.Fields("--rate 1000 --send-slack 100us"), func(o options) bool { return o.cfg.SendSlack == 100*time.Microsecond }, ""},
		{"send slack too long", strings.Fields("--rate 1000 --send-slack 5ms"), nil, "--send-slack 5ms: want 0..2ms"},
		{"bursts", strings.Fields("--rate 1600 --burst 16 --pipeline 16"), func(o options) bool { return o.cfg.Burst == 16 }, ""},
		{"bursts need a rate", strings.Fields("--burst 16"), nil, "--burst 16: bursts pace an open loop; give --rate"},
		{"negative burst", strings.Fields("--rate 10 --burst -1"), nil, "--burst -1: want 0..1000000"},
		{"rate steps list", strings.Fields("--rate-steps 1000,2000"), func(o options) bool { return len(o.rateSteps) == 2 && o.rateSteps[1] == 2000 }, ""},
		{"rate steps factor", strings.Fields("--rate-steps 1000x2x3 --slo p99=1ms"),
			func(o options) bool { return len(o.rateSteps) == 3 && o.rateSteps[2] == 4000 && len(o.objectives) == 1 }, ""},
		{"rate steps bad", strings.Fields("--rate-steps 1000x2"), nil, "--rate-steps"},
		{"rate steps and rate", strings.Fields("--rate-steps 1000 --rate 5"), nil, "the steps set the rate"},
		{"rate steps and vegeta", strings.Fields("--rate-steps 1000 --vegeta v.bin"), nil, "--vegeta: not with"},
		{"rate steps and start-at", strings.Fields("--rate-steps 1000 --start-at +5s"), nil, "--start-at: not with"},
		{"find rate", strings.Fields("--find-rate --slo p99.9=2ms --find-rate-start 5000 --find-rate-steps 6 --find-rate-time 2m --find-rate-repeats 1"),
			func(o options) bool {
				s := o.search
				return o.findRate && s.Start == 5000 && s.MaxSteps == 6 && s.MaxTime == 2*time.Minute && s.Repeats == 1 && o.objectives[0].Percentile == "p99.9"
			}, ""},
		{"find rate without slo", strings.Fields("--find-rate"), nil, "--find-rate: needs --slo"},
		{"find rate and steps", strings.Fields("--find-rate --slo p99=1ms --rate-steps 1000"), nil, "give one"},
		{"find rate bad repeats", strings.Fields("--find-rate --slo p99=1ms --find-rate-repeats 2"), nil, "--find-rate-repeats 2"},
		{"search flag without find-rate", strings.Fields("--find-rate-start 10"), nil, "--find-rate-start: only with --find-rate"},
		{"slo alone", strings.Fields("--slo p99=1ms"), nil, "--slo: only with"},
		{"bad slo", strings.Fields("--find-rate --slo p95=1ms"), nil, "p50, p90, p99, p99.9, max"},
		{"workload", []string{"--workload", "../../testdata/workloads/mixed.toml", "--url", "http://127.0.0.1:9000"},
			func(o options) bool {
				return o.cfg.Workload != nil && len(o.cfg.Workload.Kinds) == 3 && o.cfg.Port == 9000
			}, ""},
		{"workload and path", []string{"--workload", "../../testdata/workloads/mixed.toml", "--path", "/x"}, nil, "--workload and --path"},
		{"workload and url path", []string{"--workload", "../../testdata/workloads/mixed.toml", "--url", "http://h:1/x"}, nil, "without one"},
		{"workload missing", []string{"--workload", "/nonexistent.toml"}, nil, "--workload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, _, err := parseArgs(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(o) {
				t.Fatalf("err %v, options %+v", err, o)
			}
		})
	}
}
