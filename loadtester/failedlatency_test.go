package loadtester

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weaseldb/loadtester/result"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Issue 55: a server that answers every request with what a --check
// refuses still answered, and its latency is reported beside the answered
// requests' (failed_latency_ns), in the run, each kind and each stage, over
// HTTP/1.1 and HTTP/2; the four counts stay as they are (a failed check is
// failed), and a latency or checks threshold with nothing to judge fails.
func TestFailedChecksKeepTheirLatency(t *testing.T) {
	wl, err := ParseWorkload([]byte("[[request]]\nname = \"a\"\npath = \"/ok\"\n\n[[request]]\nname = \"b\"\npath = \"/ok\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		http2 bool
		set   func(*Config)
	}{
		{"HTTP/1.1 closed loop", false, func(*Config) {}},
		{"h2c closed loop, a workload", true, func(c *Config) { c.Workload = wl }},
		{"HTTP/1.1 open loop with stages", false, func(c *Config) { c.Rate, c.Stages = 200, "250ms:400,250ms:400" }},
		{"h2c open loop with stages, a workload", true, func(c *Config) {
			c.Rate, c.Stages, c.Workload = 200, "250ms:400,250ms:400", wl
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startH2Server(t, &h2Server{handle: func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(200 * time.Microsecond) // every latency is at least this
				w.Write([]byte("ok"))
			}})
			cfg := h2Config(t, s)
			if cfg.HTTP2 = tc.http2; !tc.http2 {
				cfg.Streams = 0
			}
			cfg.Checks = []string{"status == 201"}
			for _, expr := range []string{"p99<1h", "checks>0%"} { // every check outcome a failure
				th, err := result.ParseThreshold(expr)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Thresholds = append(cfg.Thresholds, th)
			}
			tc.set(&cfg)
			hdrLog := filepath.Join(t.TempDir(), "r.hlog")
			_, res, out := runJudged(t, cfg, hdrLog)
			checkAccounting(t, res)
			if res.Answered != 0 || res.Failed == 0 || res.ErrorsByKind["check"] != res.Failed {
				t.Fatalf("answered %d, failed %d (%v): want every request failed by its check\n%s", res.Answered, res.Failed, res.ErrorsByKind, out)
			}
			fl := res.FailedLatency
			if fl == nil || fl.P50 < int64(200*time.Microsecond) || fl.Max < fl.P50 || res.FailedHist() == nil ||
				res.FailedHist().TotalCount() != res.Failed {
				t.Fatalf("failed_latency_ns %+v (histogram %v): want the %d failed requests' latencies\n%s", fl, res.FailedHist(), res.Failed, out)
			}
			if !strings.Contains(out, "failed latency") {
				t.Errorf("the summary does not show the failed requests' latency:\n%s", out)
			}
			var kindFailed int64
			for _, k := range res.Kinds {
				if k.FailedLatency == nil || k.FailedHist().TotalCount() != k.Failed {
					t.Errorf("kind %s: failed %d, failed latency %+v", k.Name, k.Failed, k.FailedLatency)
				}
				kindFailed += k.Failed
			}
			if res.Kinds != nil && kindFailed != res.Failed {
				t.Errorf("kinds failed %d, run %d", kindFailed, res.Failed)
			}
			for _, st := range res.Stages {
				if st.Failed > 0 && (st.FailedLatency == nil || st.FailedHist().TotalCount() != st.Failed) {
					t.Errorf("stage %d: failed %d, failed latency %+v", st.Stage, st.Failed, st.FailedLatency)
				}
			}
			if cfg.Stages != "" && len(res.Stages) == 0 {
				t.Error("no stages")
			}
			if len(res.Thresholds) != 2 || res.ThresholdsPass() {
				t.Fatalf("thresholds %+v: want both failed, nothing to judge", res.Thresholds)
			}
			if th := res.Thresholds[0]; th.Pass || !strings.Contains(th.Reason, "nothing to judge") || !strings.Contains(out, "nothing to judge") {
				t.Errorf("%s: pass %v, reason %q: want failed, nothing to judge\n%s", th.Expr, th.Pass, th.Reason, out)
			}
			if th := res.Thresholds[1]; th.Pass || th.Measured != 0 {
				t.Errorf("%s: pass %v, measured %g: want failed at 0%%", th.Expr, th.Pass, th.Measured)
			}
			log, err := os.ReadFile(hdrLog)
			if err != nil || !strings.Contains(string(log), "Tag=failed,") {
				t.Errorf("the HDR log has no failed interval:\n%s", log)
			}
		})
	}
}

// Recording a failed request's latency (the run's histogram; a kind's and
// a stage's are recorded alike) allocates nothing: it runs for every response a
// check refuses, on the network thread.
func TestRecordFailedLatencyAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	cfg := DefaultConfig()
	cfg.Checks = []string{"status == 201"}
	th, c := newH2RenderThread(t, cfg)
	now := th.now()
	feed(th, c, h2Frames(func(fr *http2.Framer, _ *hpack.Encoder, _ *bytes.Buffer) { fr.WriteSettings() }), now)
	th.topUp(c, now)
	if c.inflight == 0 || th.acct.books.failedHist == nil {
		t.Fatalf("in flight %d, failed histogram %t: want a request and the histogram", c.inflight, th.acct.books.failedHist != nil)
	}
	th.acct.win.start = 0
	before := th.acct.books.failedHist.TotalCount()
	if allocs := testing.AllocsPerRun(1000, func() { th.acct.recordFailedLatency(c, c.head, now+1000) }); allocs != 0 {
		t.Errorf("%.1f allocations per failed request", allocs)
	}
	if th.acct.books.failedHist.TotalCount() <= before {
		t.Error("nothing recorded")
	}
}
