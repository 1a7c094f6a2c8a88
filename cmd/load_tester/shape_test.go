package main

import (
	"bytes"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"weaseldb/loadtester/result"
)

// A ramp from 0 to a target and back runs on the connections opened at
// the start (none opened during it; a warm-up stage at rate 0 opens them), its intervals follow the ramp, and
// every due request is accounted for.
func TestStagesRampOnOneSetOfConnections(t *testing.T) {
	s := startOKServer(t, 0)
	dir := t.TempDir()
	jsonPath, bin := filepath.Join(dir, "ramp.json"), filepath.Join(dir, "ramp.bin")
	var out, errOut bytes.Buffer
	// One network thread: each thread starts its share of the schedule
	// with its own first connection (connect time is not latency), so with
	// two, a thread whose ring or first connection came up tens of ms
	// later on a loaded machine shifts half the requests by that much,
	// and the half-second shape below cannot tell which ones.
	code := run([]string{"--port", s.port(), "--concurrency", "8", "--network-threads", "1",
		"--stages", "0.5s:0,1s:2000,1s:2000,1s:0", "--warmup", "0.5", "--quiet", "--json", jsonPath, "--vegeta", bin}, &out, &errOut)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	res, err := result.ReadResult(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if res.Due != res.Answered+res.Failed+res.Unfinished+res.Dropped || res.Answered == 0 {
		t.Errorf("due %d != answered %d + failed %d + unfinished %d + dropped %d", res.Due, res.Answered, res.Failed, res.Unfinished, res.Dropped)
	}
	// The area under the ramp: 1,000 + 2,000 + 1,000 (the schedule starts
	// with the first connection, a little after the window opens).
	if math.Abs(float64(res.Due)-4000) > 200 {
		t.Errorf("%d requests due, want about 4000", res.Due)
	}
	if res.ConnectionsOpened != 0 {
		t.Errorf("%d connections opened during the ramp, want none", res.ConnectionsOpened)
	}
	// The intended send times follow the ramp, whatever the machine's load
	// did to the sends: per half second of the ramp, the area under it. The
	// ramp starts with the first connection, which a loaded machine may
	// take a while to open: the first stage's measured part (the window
	// opens when the warm-up would have ended, the stage ends 0.5 s after
	// the ramp started) says how much later it started.
	start, err := time.Parse(time.RFC3339Nano, res.WindowStart)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stages) == 0 {
		t.Fatalf("no stages in the JSON")
	}
	late := time.Duration(res.Stages[0].MeasuredS * float64(time.Second))
	got := make([]float64, 6)
	for _, r := range readVegeta(t, bin) {
		if i := int((r.Timestamp.Sub(start) - late) / (500 * time.Millisecond)); i >= 0 && i < len(got) {
			got[i]++
		}
	}
	want := []float64{250, 750, 1000, 1000, 750, 250}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 0.05*want[i]+20 {
			t.Errorf("half second %d of the window: %v requests due, want about %v (the ramp): %v", i, got[i], want[i], got)
		}
	}
	// Per stage, each request in the stage it was due in: the ramp's area
	// per stage, and the stages add up to the run (the collector checks
	// that too and would warn).
	if len(res.Stages) != 4 {
		t.Fatalf("%d stages in the JSON, want 4", len(res.Stages))
	}
	var due int64
	for i, wantDue := range []float64{0, 1000, 2000, 1000} {
		st := res.Stages[i]
		due += st.Due
		if st.Stage != i+1 || math.Abs(float64(st.Due)-wantDue) > 0.05*wantDue+20 || st.Due != st.Answered+st.Failed+st.Unfinished+st.Dropped {
			t.Errorf("stage %d: %+v: want about %v due, each accounted for", i+1, st, wantDue)
		}
	}
	if res.Stages[2].From != 2000 || res.Stages[2].To != 2000 || res.Stages[3].StartS != 2.5 || res.Stages[3].EndS != 3.5 {
		t.Errorf("stage bounds %+v, want 2.5s..3.5s from 2000 to 0 for the last", res.Stages)
	}
	if due != res.Due || strings.Contains(strings.Join(res.Warnings, " "), "mismatch") {
		t.Errorf("the stages add up to %d due, the run has %d; warnings %q", due, res.Due, res.Warnings)
	}
	if !strings.Contains(out.String(), "per stage") || !strings.Contains(out.String(), "2.5s-3.5s") {
		t.Errorf("the summary has no per-stage table:\n%s", out.String())
	}
}

// Poisson arrivals measure as Poisson: the intended send times recorded
// per request have the rate's mean gap and a coefficient of variation near
// 1; the seed is in the JSON.
func TestPoissonArrivalsFromTheRecordedSendTimes(t *testing.T) {
	s := startOKServer(t, 0)
	dir := t.TempDir()
	jsonPath, bin := filepath.Join(dir, "p.json"), filepath.Join(dir, "p.bin")
	var out, errOut bytes.Buffer
	// One network thread: each thread starts its share of the schedule
	// with its own first connection (connect time is not latency), so with
	// two, a thread whose ring or first connection came up tens of ms
	// later on a loaded machine shifts half the requests by that much,
	// and the half-second shape below cannot tell which ones.
	code := run([]string{"--port", s.port(), "--concurrency", "8", "--network-threads", "1", "--rate", "2000",
		"--arrival", "poisson", "--seed", "5", "--duration", "2", "--quiet", "--json", jsonPath, "--vegeta", bin}, &out, &errOut)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	res, err := result.ReadResult(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := res.Config.(map[string]any)
	if cfg["arrival"] != "poisson" || cfg["seed"] != float64(5) {
		t.Errorf("config records arrival %v seed %v, want poisson and 5", cfg["arrival"], cfg["seed"])
	}
	var due []int64
	for _, r := range readVegeta(t, bin) {
		due = append(due, r.Timestamp.UnixNano())
	}
	slices.Sort(due)
	if len(due) < 3000 {
		t.Fatalf("%d requests recorded, want about 4000", len(due))
	}
	var sum, sum2 float64
	for i := 1; i < len(due); i++ {
		d := float64(due[i] - due[i-1])
		sum, sum2 = sum+d, sum2+d*d
	}
	n := float64(len(due) - 1)
	mean := sum / n
	cv := math.Sqrt(sum2/n-mean*mean) / mean
	if math.Abs(mean/500e3-1) > 0.1 || math.Abs(cv-1) > 0.1 {
		t.Errorf("gaps between intended sends: mean %.0f ns (want 500000), coefficient of variation %.2f (want about 1)", mean, cv)
	}
}

// A malformed ramp or arrival process is refused at start: one line naming
// the flag, exit 2, no load.
func TestShapeBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--stages", "30s"}, `--stages "30s": stage 1`},
		{[]string{"--stages", "30s:1000,abc:5"}, "stage 2"},
		{[]string{"--stages", "1s:-3"}, "target"},
		{[]string{"--stages", "1s:10", "--duration", "3"}, "--stages and --duration"},
		{[]string{"--stages", "1s:10", "--rate-steps", "10,20"}, "--stages and --rate-steps"},
		{[]string{"--stages", "1s:10", "--warmup", "2"}, "--warmup 2s"},
		{[]string{"--arrival", "gauss", "--rate", "10"}, `--arrival "gauss"`},
		{[]string{"--arrival", "poisson"}, "give --rate or --stages"},
		{[]string{"--arrival", "poisson", "--rate", "10", "--burst", "4"}, "--burst 4 with --arrival poisson"},
		{[]string{"--concurrency-stages", "1s"}, `--concurrency-stages: --stages "1s": stage 1`},
		{[]string{"--concurrency-stages", "1s:2.5"}, "want a whole number of connections"},
		{[]string{"--concurrency-stages", "1s:0,1s:0"}, "every target is 0"},
		{[]string{"--concurrency-stages", "1s:4", "--rate", "10"}, "--concurrency-stages and --rate"},
		{[]string{"--concurrency-stages", "1s:4", "--concurrency", "8"}, "--concurrency-stages and --concurrency"},
		{[]string{"--concurrency-stages", "1s:4", "--duration", "3"}, "--concurrency-stages and --duration"},
		{[]string{"--concurrency-stages", "1s:4", "--warmup", "1"}, "--warmup 1s"},
		{[]string{"--check", "body ~ ("}, `--check "body ~ (": regular expression`},
		{[]string{"--check", "json.a] == 1"}, "json path"},
		{[]string{"--check", "status==200", "--threshold", "check[status==201]>99%"}, "names no --check"},
		{[]string{"--check", "status==200", "--threshold", "checks>99"}, "a checks limit is a percentage"},
		{[]string{"--threshold", "checks>99%"}, `--threshold "checks>99%": no --check`},
	} {
		var out, errOut bytes.Buffer
		code := run(append([]string{"--port", "1"}, tc.args...), &out, &errOut)
		if code != exitUsage || strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q: want %d and one line with %q", tc.args, code, errOut.String(), exitUsage, tc.want)
		}
	}
}

// A check turns a wrong 200 into a failure: half the answers carry an
// error payload with status 200; with --check on the JSON value they are
// failed with kind check (never answered), each check's outcomes are in
// the JSON and the summary, and thresholds on them are judged (one crossed:
// exit 99).
func TestCheckTurnsAWrong200IntoAFailure(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if n.Add(1)%2 == 0 {
			w.Write([]byte(`{"status":"error"}`))
			return
		}
		w.Write([]byte(`{"status":"ok"}`))
	}))
	t.Cleanup(srv.Close)
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	jsonPath := filepath.Join(t.TempDir(), "checks.json")
	var out, errOut bytes.Buffer
	code := run([]string{"--port", port, "--concurrency", "2", "--duration", "0.5", "--warmup", "0",
		"--check", `json.status == "ok"`, "--check", "status==200", "--check", "header[Content-Type] ~ json",
		"--threshold", `check[json.status == "ok"]>99%`, "--threshold", "check[status==200]>=100%", "--threshold", "checks>50%", "--max-errors", "1000000000",
		"--json", jsonPath}, &out, &errOut)
	if code != exitThreshold {
		t.Fatalf("exit %d, want %d (a threshold crossed)\n%s%s", code, exitThreshold, out.String(), errOut.String())
	}
	res, err := result.ReadResult(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Checks) != 3 {
		t.Fatalf("checks %+v", res.Checks)
	}
	body, status, header := res.Checks[0], res.Checks[1], res.Checks[2]
	if body.Failed == 0 || body.Passed == 0 || status.Failed != 0 || header.Failed != 0 {
		t.Errorf("checks %+v: want the JSON check both passed and failed, the others always passed", res.Checks)
	}
	if res.ErrorsByKind["check"] != body.Failed || res.Failed != body.Failed || res.Answered != body.Passed {
		t.Errorf("failed %d (check %d), answered %d; the JSON check failed %d, passed %d",
			res.Failed, res.ErrorsByKind["check"], res.Answered, body.Failed, body.Passed)
	}
	if len(res.Thresholds) != 3 || res.Thresholds[0].Pass || !res.Thresholds[1].Pass || !res.Thresholds[2].Pass {
		t.Errorf("thresholds %+v: want the JSON check's crossed (about half passed), the others met", res.Thresholds)
	}
	if res.Due != res.Answered+res.Failed+res.Unfinished+res.Dropped {
		t.Errorf("due %d != %d + %d + %d + %d", res.Due, res.Answered, res.Failed, res.Unfinished, res.Dropped)
	}
	if !strings.Contains(out.String(), `checks        json.status == "ok": `) {
		t.Errorf("the summary has no checks line:\n%s", out.String())
	}
}

// The closed loop's connections ramp (--concurrency-stages) from 0 up to a
// peak and back to 0: the server never sees more connections open at once
// than the peak, sees the peak, and none is left open; a connection past
// the ramp is closed only once its request in flight is answered, so
// every request the server was sent was answered, none failed; and the
// stages add up to the run.
func TestConcurrencyStagesRampConnectionsWithoutLosingRequests(t *testing.T) {
	var open, peak, served atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond) // pipelined requests are in flight when their connection is retired
		served.Add(1)
		w.Write([]byte("ok"))
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			n := open.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	jsonPath := filepath.Join(t.TempDir(), "vus.json")
	var out, errOut bytes.Buffer
	code := run([]string{"--port", port, "--network-threads", "2", "--pipeline", "4", "--concurrency-stages", "0.4s:6,0.4s:6,0.4s:0",
		"--quiet", "--json", jsonPath}, &out, &errOut)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	res, err := result.ReadResult(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close() // every handler has returned
	// The preflight's connection is one more, closed before the load.
	if p := peak.Load(); p < 6 || p > 7 {
		t.Errorf("the server saw at most %d connections open at once, want the peak of 6", p)
	}
	if res.Failed != 0 || res.Unfinished != 0 || res.Answered == 0 || res.Due != res.Answered {
		t.Errorf("due %d, answered %d, failed %d, unfinished %d: want every request answered", res.Due, res.Answered, res.Failed, res.Unfinished)
	}
	if served.Load() != res.Answered { // the preflight connects, and sends nothing
		t.Errorf("the server answered %d requests, the client counted %d answered", served.Load(), res.Answered)
	}
	if n := len(res.Intervals); n == 0 || res.Intervals[n-1].OpenConnections != 0 {
		t.Errorf("connections open at the end: %+v, want 0 (the ramp ends at 0)", res.Intervals)
	}
	if len(res.Stages) != 3 || !res.Stages[0].Connections || res.Stages[1].From != 6 || res.Stages[2].To != 0 {
		t.Fatalf("stages %+v: want 3, ramping connections 0→6→6→0", res.Stages)
	}
	var due int64
	for _, st := range res.Stages {
		due += st.Due
		if st.Answered == 0 {
			t.Errorf("stage %d answered nothing: %+v", st.Stage, st)
		}
	}
	if due != res.Due {
		t.Errorf("the stages add up to %d due, the run has %d", due, res.Due)
	}
}
