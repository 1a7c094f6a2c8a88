package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"weaseldb/loadtester/result"
)

// kneeServer answers every request, 40 ms late while more than limit
// requests arrived in the last 100 ms, at once otherwise: a server whose
// latency rises past a known rate (limit × 10 per second). An open loop
// spaces its requests evenly, so the count in the window follows the rate.
func kneeServer(t *testing.T, limit int) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	var arrivals []time.Time
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		mu.Lock()
		arrivals = append(arrivals, now)
		cut := 0
		for cut < len(arrivals) && now.Sub(arrivals[cut]) > 100*time.Millisecond {
			cut++
		}
		arrivals = arrivals[cut:]
		busy := len(arrivals) > limit
		mu.Unlock()
		if busy {
			time.Sleep(40 * time.Millisecond)
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(s.Close)
	return s
}

func serverPort(s *httptest.Server) string {
	_, port, _ := strings.Cut(strings.TrimPrefix(s.URL, "http://"), ":")
	return port
}

// --find-rate against a server whose latency rises past 340 req/s: the
// climb from 100 by 2 passes 200 and fails 400, the bisection passes 283
// (their geometric mean), and the bracket [283, 400] is within the asked
// precision of 50%: the known rate found within one step. A row per step,
// one HDR log per step, and the JSON document with the answer.
func TestFindRateEndToEnd(t *testing.T) {
	s := kneeServer(t, 34)
	dir := t.TempDir()
	jsonPath, hlog := filepath.Join(dir, "knee.json"), filepath.Join(dir, "knee.hlog")
	var out, errOut bytes.Buffer
	code := run([]string{"--port", serverPort(s), "--concurrency", "20", "--find-rate", "--slo", "p50=20ms",
		"--find-rate-start", "100", "--find-rate-precision", "0.5", "--find-rate-repeats", "1",
		"--warmup", "0.3", "--duration", "0.7", "--stats-interval", "0.35", "--quiet", "--json", jsonPath, "--hdr-log", hlog}, &out, &errOut)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	sr, err := result.ReadSteps(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	srch := sr.Search
	if srch == nil || srch.LastPass != 283 || srch.FirstFail != 400 || srch.Rate != 283 || !srch.Confirmed {
		t.Fatalf("search %+v: want 283 passing and 400 failing\n%s", srch, out.String())
	}
	if len(sr.Steps) != 4 || sr.Objectives[0].Percentile != "p50" {
		t.Fatalf("%d steps, objectives %v", len(sr.Steps), sr.Objectives)
	}
	for _, st := range sr.Steps {
		if st.HDRLog != hlog[:len(hlog)-5]+".step"+strconv.Itoa(st.N)+".hlog" {
			t.Errorf("step %d: hdr log %q", st.N, st.HDRLog)
		}
		logged := int64(0)
		for _, h := range readHDRLog(t, st.HDRLog) {
			logged += h.TotalCount()
		}
		if logged != st.Result.Hist().TotalCount() || st.Due != st.Answered+st.Failed+st.Unfinished+st.Dropped {
			t.Errorf("step %d: HDR log holds %d values, the step %d; due %d", st.N, logged, st.Result.Hist().TotalCount(), st.Due)
		}
	}
	text := out.String()
	for _, want := range []string{"step 1: --rate 100", "find-rate (p50<=20.00ms): 283 req/s", "the knee lies between 283/s", "and 400/s"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

// --rate-steps runs each step and writes a row per step; a steps document
// is no single run's result (merge refuses it in one line).
func TestRateStepsEndToEnd(t *testing.T) {
	s := startOKServer(t, 0)
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "steps.json")
	var out, errOut bytes.Buffer
	code := run([]string{"--port", s.port(), "--concurrency", "4", "--rate-steps", "100x2x2", "--slo", "p99=1s",
		"--warmup", "0.2", "--duration", "0.5", "--quiet", "--json", jsonPath}, &out, &errOut)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	sr, err := result.ReadSteps(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(sr.Steps) != 2 || sr.Steps[0].RateAsked != 100 || sr.Steps[1].RateAsked != 200 || sr.Search != nil {
		t.Fatalf("steps %+v", sr.Steps)
	}
	for _, st := range sr.Steps {
		if st.Pass == nil || !*st.Pass || st.Due != int64(st.RateAsked/2) {
			t.Errorf("step %d: pass %v %v, due %d", st.N, st.Pass, st.FailReasons, st.Due)
		}
	}
	if !strings.Contains(out.String(), "asked/s  achieved") {
		t.Errorf("no table:\n%s", out.String())
	}
	errOut.Reset()
	if code := run([]string{"merge", jsonPath}, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), "ReadSteps") {
		t.Errorf("merge of a steps document: exit %d, %q", code, errOut.String())
	}
}

// Outputs of steps that cannot be written fail the command before any
// load: exit 1, one line naming the flag, no request sent.
func TestStepsOutputsNotWritten(t *testing.T) {
	s := startOKServer(t, 0)
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "f")
	for _, flagName := range []string{"--json", "--hdr-log"} {
		var out, errOut bytes.Buffer
		code := run([]string{"--port", s.port(), "--rate-steps", "100", "--duration", "0.3", "--quiet", flagName, missing}, &out, &errOut)
		if code != exitFailure || strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), flagName) {
			t.Errorf("%s: exit %d, stderr %q", flagName, code, errOut.String())
		}
	}
	if n := s.requests.Load(); n != 0 {
		t.Errorf("the server read %d requests: want none before the outputs are known to be writable", n)
	}
}

// --workload: the summary and the JSON count each kind, and merge keeps
// them.
func TestWorkloadEndToEnd(t *testing.T) {
	s := startOKServer(t, 0)
	dir := t.TempDir()
	var paths []string
	for i := range 2 {
		p := filepath.Join(dir, "w"+strconv.Itoa(i)+".json")
		paths = append(paths, p)
		var out, errOut bytes.Buffer
		code := run([]string{"--port", s.port(), "--concurrency", "4", "--workload", "../../testdata/workloads/mixed.toml",
			"--rate", "400", "--warmup", "0.2", "--duration", "0.5", "--quiet", "--json", p, "--instance", "i" + strconv.Itoa(i)}, &out, &errOut)
		if code != exitOK {
			t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
		}
		if !strings.Contains(out.String(), "per kind") || !strings.Contains(out.String(), "(workload ../../testdata/workloads/mixed.toml)") {
			t.Errorf("summary:\n%s", out.String())
		}
	}
	mergedPath := filepath.Join(dir, "merged.json")
	var out, errOut bytes.Buffer
	if code := run(append([]string{"merge", "--json", mergedPath}, paths...), &out, &errOut); code != exitOK {
		t.Fatalf("merge: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	merged, err := result.ReadResult(mergedPath)
	if err != nil {
		t.Fatal(err)
	}
	var due int64
	for _, k := range merged.Kinds {
		due += k.Due
	}
	if len(merged.Kinds) != 3 || due != merged.Due || merged.Due != 400 {
		t.Errorf("merged kinds %d, due %d of %d (want 400)", len(merged.Kinds), due, merged.Due)
	}
	if data, _ := os.ReadFile(mergedPath); !bytes.Contains(data, []byte(`"name": "status"`)) {
		t.Error("merged JSON lacks the status kind")
	}
}
