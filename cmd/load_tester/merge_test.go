package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"weaseldb/internal/syncbuf"
	"weaseldb/loadtester/result"
)

// The merge command on results of real runs: several instances started
// together, its refusals and warnings, and the report reading what it
// wrote. Merge's own behaviour is tested in package loadtester.

// startWeaselDB starts ../../build/weaseldb (or $WEASELDB_BIN) on a free
// loopback TCP port, in network namespace netns when given ("" for none).
// It reports false when the binary is not built.
func startWeaselDB(t *testing.T, address string, netns string) (port int, ok bool) {
	t.Helper()
	bin := os.Getenv("WEASELDB_BIN")
	if bin == "" {
		bin = "../../build/weaseldb"
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		return 0, false
	}
	port = freePort(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "w.toml")
	toml := fmt.Sprintf("[server]\ninterfaces = [{ type = \"tcp\", address = %q, port = %d }]\nio_threads = 1\n", address, port)
	if err := os.WriteFile(config, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	args := []string{bin, "--config", config}
	if netns != "" {
		args = append([]string{"ip", "netns", "exec", netns}, args...)
	}
	srv := exec.CommandContext(ctx, args[0], args[1:]...)
	srv.Dir = dir
	var out syncbuf.Buffer
	srv.Stdout, srv.Stderr = &out, &out
	if err := srv.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			srv.Process.Kill()
			<-done
		}
		cancel()
	})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "weaseldb: ready") {
		if time.Now().After(deadline) {
			t.Fatalf("weaseldb did not get ready:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return port, true
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// runInstances runs n load_tester processes (each command prefixed by
// wrap(i), e.g. ip netns exec) with the same --start-at against url, and
// returns their JSON paths.
func runInstances(t *testing.T, bin, url string, n int, wrap func(i int) []string) []string {
	t.Helper()
	dir := t.TempDir()
	start := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	var paths []string
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("inst-%d.json", i))
		args := append(wrap(i), bin, "--url", url, "--concurrency", "4", "--warmup", "0.5",
			"--duration", "1.5", "--stats-interval", "0.5", "--start-at", start,
			"--instance", fmt.Sprintf("inst-%d", i), "--json", p,
			"--vegeta", filepath.Join(dir, fmt.Sprintf("inst-%d.bin", i)), "--quiet")
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs, paths = append(cmds, cmd), append(outs, &out), append(paths, p)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("instance %d: %v\n%s", i, err, outs[i].String())
		}
	}
	return paths
}

// checkMerged checks a merge of inputs against the inputs themselves.
func checkMerged(t *testing.T, inputs []string) {
	t.Helper()
	dir := t.TempDir()
	mergedPath, hlog, bin := filepath.Join(dir, "merged.json"), filepath.Join(dir, "merged.hlog"), filepath.Join(dir, "merged.bin")
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"merge", "--json", mergedPath, "--hdr-log", hlog, "--vegeta", bin}, inputs...), &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	m, err := result.ReadResult(mergedPath)
	if err != nil {
		t.Fatal(err)
	}
	sum := hdrhistogram.New(1, 3600*1e9, 3)
	var requests, due int64
	perInterval := map[int]int64{}
	for _, p := range inputs {
		r, err := result.ReadResult(p)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := hdrhistogram.Decode([]byte(r.Histogram))
		if err != nil {
			t.Fatal(err)
		}
		sum.Merge(dec)
		requests += r.Requests
		due += r.Due
		for i, iv := range r.Intervals {
			perInterval[i] += iv.Requests
		}
	}
	if m.Requests != requests || m.Due != due || m.Requests == 0 {
		t.Errorf("merged requests %d due %d, inputs add up to %d and %d", m.Requests, m.Due, requests, due)
	}
	h := m.Hist()
	if h.TotalCount() != sum.TotalCount() || h.Min() != sum.Min() || h.Max() != sum.Max() {
		t.Errorf("merged histogram count %d min %d max %d; sum of the inputs' %d, %d, %d",
			h.TotalCount(), h.Min(), h.Max(), sum.TotalCount(), sum.Min(), sum.Max())
	}
	for _, q := range []float64{50, 90, 99, 99.9} {
		if a, b := h.ValueAtQuantile(q), sum.ValueAtQuantile(q); a != b {
			t.Errorf("p%v: merged %d, sum of the inputs %d", q, a, b)
		}
	}
	if len(m.Intervals) != len(perInterval) {
		t.Errorf("%d merged intervals, the inputs have %d", len(m.Intervals), len(perInterval))
	}
	for i, iv := range m.Intervals {
		if iv.Requests != perInterval[i] {
			t.Errorf("interval %d: merged %d requests, the inputs' add up to %d", i+1, iv.Requests, perInterval[i])
		}
	}
	for _, w := range m.Warnings {
		if strings.Contains(w, "overlap") || strings.Contains(w, "differs") {
			t.Errorf("warning: %s", w)
		}
	}
	if s := stdout.String(); !strings.Contains(s, fmt.Sprintf("instances (%d)", len(inputs))) || !strings.Contains(s, "due ") {
		t.Errorf("merge printed no summary with the instance table:\n%s", s)
	}
	f, err := os.Open(hlog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reader := hdrhistogram.NewHistogramLogReader(f)
	var logged int64
	for {
		ih, err := reader.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if ih == nil {
			break
		}
		logged += ih.TotalCount()
	}
	if logged != h.TotalCount() {
		t.Errorf("merged HDR log holds %d values, the merged histogram %d", logged, h.TotalCount())
	}
	results := readVegeta(t, bin)
	if int64(len(results)) != due {
		t.Errorf("merged vegeta file holds %d results, the instances had %d due requests", len(results), due)
	}
	for i := range results {
		if results[i].Seq != uint64(i) || (i > 0 && results[i].Timestamp.Before(results[i-1].Timestamp)) {
			t.Fatalf("merged vegeta result %d: seq %d at %v: want 0.. in time order", i, results[i].Seq, results[i].Timestamp)
		}
	}
}

// Three instances on this machine, started together with --start-at
// against one weaseldb (the in-test server when weaseldb is not built).
func TestThreeInstancesMerge(t *testing.T) {
	bin := buildBinary(t)
	port, ok := startWeaselDB(t, "127.0.0.1", "")
	if !ok {
		t.Log("build/weaseldb not built (make build): the in-test server stands in")
		port, _ = strconv.Atoi(startOKServer(t, 0).port())
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/ok", port)
	inputs := runInstances(t, bin, url, 3, func(int) []string { return nil })
	for _, p := range inputs {
		r, err := result.ReadResult(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.Instance, "inst-") || r.CPUs == 0 || r.ClockSource == "" || r.WindowStart == "" {
			t.Errorf("%s: instance %q cpus %d clock %q window %q", p, r.Instance, r.CPUs, r.ClockSource, r.WindowStart)
		}
	}
	checkMerged(t, inputs)
}

// runJSON runs the command against s with a short run's flags plus args
// and --json into dir; it returns the JSON's path.
func runJSON(t *testing.T, s *okServer, dir, name string, args ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	var out, errOut bytes.Buffer
	args = append([]string{"--port", s.port(), "--concurrency", "4", "--duration", "0.5", "--stats-interval", "0.25",
		"--timeout", "5", "--quiet", "--json", p}, args...)
	if code := run(args, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	return p
}

// mergeFixture makes one real result (a short in-process run) and returns
// it as generic JSON, to derive bad inputs from.
func mergeFixture(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(runJSON(t, startOKServer(t, 0), t.TempDir(), "base.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func writeJSONFile(t *testing.T, dir, name string, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// clone deep-copies generic JSON.
func clone(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	data, _ := json.Marshal(m)
	var c map[string]any
	json.Unmarshal(data, &c)
	return c
}

func TestMergeWarnsAndRefuses(t *testing.T) {
	base := mergeFixture(t)
	dir := t.TempDir()
	basePath := writeJSONFile(t, dir, "base.json", base)
	start, _ := time.Parse(time.RFC3339Nano, base["window_start"].(string))

	shifted := clone(t, base)
	shifted["instance"] = "late"
	shifted["window_start"] = start.Add(10 * time.Second).Format(time.RFC3339Nano)
	differs := clone(t, base)
	differs["instance"] = "other"
	differs["config"].(map[string]any)["concurrency"] = 99
	bound := clone(t, base)
	bound["instance"] = "slow"
	bound["client_bound"], bound["client_bound_reason"] = true, "the client used 97% of its cores"
	old := clone(t, base)
	old["version"] = 1
	corrupt := clone(t, base)
	corrupt["histogram"] = "HISTFAAAA" + strings.Repeat("x", 40)
	badInterval := clone(t, base)
	badInterval["intervals"].([]any)[0].(map[string]any)["histogram"] = "not a histogram"
	noHist := clone(t, base)
	delete(noHist, "histogram")
	data, _ := json.Marshal(base)
	truncated := filepath.Join(dir, "truncated.json")
	os.WriteFile(truncated, data[:len(data)/2], 0o644)

	warnings := []struct {
		name, input, want string
	}{
		{"windows apart", writeJSONFile(t, dir, "shifted.json", shifted), "do not overlap within one interval"},
		{"configs differ", writeJSONFile(t, dir, "differs.json", differs), "config differs from"},
		{"client-bound instance", writeJSONFile(t, dir, "bound.json", bound), "instance slow was client-bound"},
	}
	for _, tc := range warnings {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run([]string{"merge", basePath, tc.input}, &out, &errOut)
			if code != exitOK || !strings.Contains(out.String(), tc.want) {
				t.Errorf("exit %d, want 0 and a warning %q:\n%s%s", code, tc.want, out.String(), errOut.String())
			}
		})
	}
	refusals := []struct {
		name  string
		args  []string
		wantE string
	}{
		{"no inputs", nil, "no inputs"},
		{"older schema", []string{basePath, writeJSONFile(t, dir, "old.json", old)}, "schema version 1"},
		{"corrupt histogram", []string{basePath, writeJSONFile(t, dir, "corrupt.json", corrupt)}, "histogram"},
		{"corrupt interval histogram", []string{writeJSONFile(t, dir, "badiv.json", badInterval)}, "interval 1 histogram"},
		{"histogram missing", []string{writeJSONFile(t, dir, "nohist.json", noHist)}, "no histogram"},
		{"truncated", []string{basePath, truncated}, "truncated.json"},
		{"missing file", []string{filepath.Join(dir, "nowhere.json")}, "nowhere.json"},
		{"vegeta not recorded", []string{"--vegeta", filepath.Join(dir, "v.bin"), basePath}, "without --vegeta"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(append([]string{"merge"}, tc.args...), &out, &errOut)
			wantCode := exitUsage
			if strings.HasPrefix(tc.name, "vegeta") {
				wantCode = exitFailure
			}
			if code != wantCode || strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), tc.wantE) {
				t.Errorf("exit %d stderr %q: want exit %d and one line naming %q", code, errOut.String(), wantCode, tc.wantE)
			}
		})
	}
}

// The report generator renders a merged result through its own command
// line: a run directory with the manifest of the recorded run and the
// merged load.json and load.hlog.
func TestReportRendersMergedResult(t *testing.T) {
	report, err := filepath.Abs("../../build/report")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(report); err != nil {
		t.Skip("build/report not built (make build): skipping the report of a merged result")
	}
	s := startOKServer(t, 0)
	dir := t.TempDir()
	var inputs []string
	for i := range 2 {
		name := fmt.Sprintf("inst-%d", i)
		inputs = append(inputs, runJSON(t, s, dir, name+".json", "--duration", "1", "--instance", name))
	}
	runDir := filepath.Join(dir, "run")
	os.Mkdir(runDir, 0o755)
	manifest, err := os.ReadFile("../../testdata/report_run/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(runDir, "manifest.json"), manifest, 0o644)
	var out, errOut bytes.Buffer
	if code := run(append([]string{"merge", "--json", filepath.Join(runDir, "load.json"), "--hdr-log", filepath.Join(runDir, "load.hlog")}, inputs...), &out, &errOut); code != exitOK {
		t.Fatalf("merge: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	md := filepath.Join(runDir, "report.md")
	cmd := exec.CommandContext(ctx, report, "--run", runDir, "--out", md, "--images", filepath.Join(runDir, "img"))
	if combined, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("report --run on a merged result: %v\n%s", err, combined)
	}
	merged, err := result.ReadResult(filepath.Join(runDir, "load.json"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.FormatFloat(merged.RequestsPerSec, 'f', 0, 64); !strings.Contains(strings.ReplaceAll(string(text), ",", ""), want) {
		t.Errorf("the report does not show the merged %s req/s", want)
	}
}
