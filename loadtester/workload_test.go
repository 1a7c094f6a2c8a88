package loadtester

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const goodWorkload = `
[[request]]
name = "ok"
weight = 80
path = "/ok"

[[request]]
name = "commit"
weight = 15
method = "POST"
path = "/v1/commit"
headers = ["Content-Type: application/json"]
body = '{"request_id":"lt-{{run}}-{{seq}}"}'

[[request]]
name = "status"
weight = 5
path = "/v1/status?request_id=lt-{{run}}-{{answered:commit}}"
`

// A workload file parses into its kinds; every problem is named by its
// key, all at once.
func TestParseWorkload(t *testing.T) {
	kind := func(extra string) string {
		return "[[request]]\nname = \"a\"\npath = \"/a\"\n" + extra + "\n"
	}
	tests := []struct {
		name  string
		toml  string
		kinds int
		want  []string // substrings of the error, each; none: it parses
	}{
		{"good", goodWorkload, 3, nil},
		{"inline tables", `request = [{name = "a", path = "/a"}, {name = "b", path = "/b", weight = 3}]`, 2, nil},
		{"weight defaults to 1", kind(""), 1, nil},
		{"weight zero", kind("weight = 0"), 0, []string{"request[1].weight: 0: want 1..1000000"}},
		{"weight negative", kind("weight = -5"), 0, []string{"request[1].weight: -5"}},
		{"weight fractional", kind("weight = 1.5"), 0, []string{"request[1].weight: must be a whole number, got a float"}},
		{"weight a string", kind(`weight = "heavy"`), 0, []string{"request[1].weight: must be a whole number, got a string"}},
		{"weight too large", kind("weight = 2000000"), 0, []string{"request[1].weight: 2000000"}},
		{"weights too fine", kind("weight = 65537") + "[[request]]\nname = \"b\"\npath = \"/b\"\n", 0, []string{"add up to 65538"}},
		{"unknown key named", kind("") + "[[request]]\nname = \"b\"\npath = \"/b\"\nwieght = 3\n", 0,
			[]string{"request[2].wieght: unknown key; allowed: name, weight, method, path, headers, body, body_file, data, data_policy, checks"}},
		{"unknown top-level key", "title = \"x\"\n" + kind(""), 0, []string{"title: unknown key"}},
		{"no requests", "", 0, []string{"no [[request]] tables"}},
		{"request not tables", `request = "x"`, 0, []string{"request: must be [[request]] tables"}},
		{"every error at once", "[[request]]\nweight = 0\nmethod = \"G T\"\npath = \"ok\"\n", 0,
			[]string{"request[1].weight", "request[1].name: missing", "request[1].method", "request[1].path"}},
		{"bad name", "[[request]]\nname = \"a b\"\npath = \"/\"\n", 0, []string{`request[1].name: "a b"`}},
		{"duplicate names", kind("") + kind(""), 0, []string{`request[2].name: "a" is also request[1]'s`}},
		{"body and body_file", kind(`body = "x"` + "\nbody_file = \"f\""), 0, []string{"request[1].body: give body or body_file"}},
		{"bad header", kind(`headers = ["nocolon"]`), 0, []string{"request[1].headers[1]"}},
		{"headers not a list", kind(`headers = "A: b"`), 0, []string{"request[1].headers: must be a list"}},
		{"answered: unknown kind", kind(`body = "{{answered:nope}}"`), 0, []string{"no kind named nope (kinds: a)"}},
		{"answered: kind without seq", kind(`body = "{{answered:a}}"`), 0, []string{"kind a has no {{seq}}"}},
		{"seq%0", kind(`body = "{{seq%0}}"`), 0, []string{"want {{seq%N}}"}},
		{"seq%x", kind(`body = "{{seq%x}}"`), 0, []string{"want {{seq%N}}"}},
		{"seq% unclosed", kind(`body = "{{seq%3"`), 0, []string{"no closing }}"}},
		{"seq%N fine", kind(`body = "id-{{seq%100}}"`), 1, nil},
		{"invalid TOML", "[[request]\n", 0, []string{"invalid TOML"}},
		{"too many kinds", strings.Repeat("[[request]]\npath = \"/\"\nname = \"k\"\n", 17), 0, []string{"17 kinds, at most 16"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := ParseWorkload([]byte(tt.toml))
			if tt.want == nil {
				if err != nil || len(w.Kinds) != tt.kinds {
					t.Fatalf("err %v, kinds %+v: want %d kinds", err, w, tt.kinds)
				}
				return
			}
			if err == nil {
				t.Fatalf("parsed: want an error naming %q", tt.want)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q\nwant it to name %q", err, want)
				}
			}
		})
	}
}

// The kind table holds each kind in proportion to its weight (over their
// greatest common divisor), spread out: no kind waits much longer than its
// share between two of its entries.
func TestKindTable(t *testing.T) {
	tests := []struct {
		weights []int
		length  int
	}{
		{[]int{80, 15, 5}, 20},
		{[]int{1}, 1},
		{[]int{3, 3, 3}, 3},
		{[]int{999, 1}, 1000},
		{[]int{7, 5, 3, 2}, 17},
	}
	for _, tt := range tests {
		table, err := kindTable(tt.weights)
		if err != nil || len(table) != tt.length {
			t.Fatalf("%v: %d entries, %v; want %d", tt.weights, len(table), err, tt.length)
		}
		g := 0
		for _, w := range tt.weights {
			g = gcd(g, w)
		}
		for k, w := range tt.weights {
			var at []int
			for i, e := range table {
				if int(e) == k {
					at = append(at, i)
				}
			}
			if len(at) != w/g {
				t.Errorf("%v: kind %d has %d entries, want %d", tt.weights, k, len(at), w/g)
			}
			for i := range at { // the gap to the next entry, around the table
				gap := (at[(i+1)%len(at)] - at[i] + len(table)) % len(table)
				if gap == 0 {
					gap = len(table)
				}
				if limit := 2*len(table)/(w/g) + 1; gap > limit {
					t.Errorf("%v: kind %d waits %d entries between two of its requests (share %d/%d)", tt.weights, k, gap, w/g, len(table))
				}
			}
		}
	}
}

// kindCounts counts the kinds of any range of the schedule as one by one.
func TestKindCounts(t *testing.T) {
	table, _ := kindTable([]int{80, 15, 5})
	r := &runner{kinds: make([]kindSpec, 3), table: table}
	for _, rg := range [][2]uint64{{0, 0}, {0, 1}, {3, 17}, {5, 45}, {19, 1019}, {123, 99_999}} {
		want := make([]int64, 3)
		for k := rg[0]; k < rg[1]; k++ {
			want[r.kindOf(k)]++
		}
		got := make([]int64, 3)
		r.kindCounts(rg[0], rg[1], func(kind uint8, n int64) { got[kind] += n })
		for k := range want {
			if got[k] != want[k] {
				t.Errorf("[%d, %d): kind %d counted %d, want %d", rg[0], rg[1], k, got[k], want[k])
			}
		}
	}
}

// A body_file is read relative to the workload file.
func TestLoadWorkloadBodyFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "body.json"), []byte(`{"x":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "w.toml")
	if err := os.WriteFile(path, []byte("[[request]]\nname = \"a\"\nmethod = \"POST\"\npath = \"/a\"\nbody_file = \"body.json\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := LoadWorkload(path)
	if err != nil || string(w.Kinds[0].Body) != `{"x":1}` || w.Source != path {
		t.Fatalf("%+v, %v", w, err)
	}
	if err := os.Remove(filepath.Join(dir, "body.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadWorkload(path); err == nil || !strings.Contains(err.Error(), "body_file") {
		t.Errorf("a missing body_file: %v", err)
	}
}

// testdata/workloads/mixed.toml, the file the docs show, parses.
func TestShippedWorkloads(t *testing.T) {
	files, _ := filepath.Glob("../testdata/workloads/*.toml")
	if len(files) == 0 {
		t.Fatal("no testdata/workloads/*.toml")
	}
	for _, f := range files {
		if _, err := LoadWorkload(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// FuzzParseWorkload: any text is refused with an error or parses into
// kinds whose table holds each in proportion to its weight; never a panic.
func FuzzParseWorkload(f *testing.F) {
	f.Add([]byte(goodWorkload))
	f.Add([]byte("[[request]]\nname = \"a\"\npath = \"/a\"\nweight = 3\nbody = \"{{seq%7}}{{answered:a}}\"\n"))
	f.Add([]byte("request = [{name = \"a\", path = \"/\"}]"))
	f.Add([]byte("[[request]]\nwieght = 0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ParseWorkload(data)
		if err != nil {
			if w != nil {
				t.Fatal("a workload with an error")
			}
			return
		}
		table, err := kindTable(w.weights())
		if err != nil || len(w.Kinds) == 0 || len(w.Kinds) > maxKinds {
			t.Fatalf("parsed %d kinds, table %v", len(w.Kinds), err)
		}
		counts := make([]int, len(w.Kinds))
		for _, k := range table {
			counts[k]++
		}
		g := 0
		for _, wt := range w.weights() {
			g = gcd(g, wt)
		}
		for i, k := range w.Kinds {
			if k.Weight < 1 || counts[i] != k.Weight/g {
				t.Fatalf("kind %s: weight %d, %d entries of %d", k.Name, k.Weight, counts[i], len(table))
			}
			if counts[i] == 0 {
				t.Fatalf("kind %s (weight %d) never in the table", k.Name, k.Weight)
			}
			if _, err := newRequestTemplate(k.Method, k.Path, "h", k.Headers, k.Body, placeholders{kinds: w.resolver(), columns: anyColumn}); err != nil {
				t.Fatalf("kind %s parsed but its request does not: %v", k.Name, err)
			}
		}
	})
}

// A workload run counts every kind on its own, and its counts add up to
// the run's: in the open loop each kind's due requests are exactly its
// share of the schedule, in the closed loop its share of the sends; a
// status asks only about commits already answered (or, before the
// thread's first, about an id no commit uses).
func TestWorkloadRun(t *testing.T) {
	for _, rate := range []float64{0, 800} {
		name := "closed loop"
		if rate > 0 {
			name = "open loop"
		}
		t.Run(name, func(t *testing.T) {
			commitID := regexp.MustCompile(`"request_id":"(lt-[0-9a-f]{8}-\d+)"`)
			statusID := regexp.MustCompile(`request_id=(lt-[0-9a-f]{8}-\d+)`)
			answered, committed := map[string]bool{}, map[string]bool{}
			var statuses []string
			var bad []string
			s := startTestServer(t, "tcp", func(s *testServer) {
				s.delay = time.Millisecond
				s.events = func(event, line, body string) {
					switch {
					case strings.HasPrefix(line, "POST /v1/commit") && event == "arrive":
						committed[commitID.FindStringSubmatch(body)[1]] = true
					case strings.HasPrefix(line, "POST /v1/commit"):
						answered[commitID.FindStringSubmatch(body)[1]] = true
					case strings.HasPrefix(line, "GET /v1/status") && event == "arrive":
						id := statusID.FindStringSubmatch(line)[1]
						statuses = append(statuses, id)
						if committed[id] && !answered[id] {
							bad = append(bad, id)
						}
					}
				}
			})
			w, err := ParseWorkload([]byte(goodWorkload))
			if err != nil {
				t.Fatal(err)
			}
			cfg := testConfig(s)
			cfg.Workload, cfg.Rate, cfg.NetworkThreads, cfg.Concurrency = w, rate, 2, 8
			cfg.Warmup, cfg.Duration = 200*time.Millisecond, time.Second
			res := runOK(t, cfg)
			if len(res.Kinds) != 3 {
				t.Fatalf("%d kinds", len(res.Kinds))
			}
			var due, answeredN int64
			for _, k := range res.Kinds {
				due += k.Due
				answeredN += k.Answered
				if k.Due != k.Answered+k.Failed+k.Unfinished+k.Dropped || k.Histogram == "" || k.StatusCodes["200"] != k.Answered {
					t.Errorf("kind %s: due %d = %d + %d + %d + %d, statuses %v", k.Name, k.Due, k.Answered, k.Failed, k.Unfinished, k.Dropped, k.StatusCodes)
				}
				// Each thread walks the 20-entry table from its own start:
				// a kind's count is its share within a table's turn per thread.
				if slack := float64(2 * 20); float64(k.Due) < k.Share*float64(res.Due)-slack || float64(k.Due) > k.Share*float64(res.Due)+slack {
					t.Errorf("kind %s: %d of %d due, want about %.0f%%", k.Name, k.Due, res.Due, 100*k.Share)
				}
				if (rate > 0) != (k.ServiceLatency != nil) {
					t.Errorf("kind %s: service latency %v in rate %g", k.Name, k.ServiceLatency, rate)
				}
			}
			if due != res.Due || answeredN != res.Answered {
				t.Errorf("kinds add up to due %d, answered %d; the run has %d, %d", due, answeredN, res.Due, res.Answered)
			}
			for _, w := range res.Warnings {
				if strings.Contains(w, "mismatch") {
					t.Error(w)
				}
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(bad) > 0 {
				t.Errorf("%d status requests asked about commits not yet answered: %v", len(bad), bad[:min(5, len(bad))])
			}
			existing := 0
			for _, id := range statuses {
				if answered[id] {
					existing++
				}
			}
			if len(statuses) == 0 || existing < len(statuses)*3/4 {
				t.Errorf("%d of %d status requests asked about an answered commit: want most", existing, len(statuses))
			}
		})
	}
}

// Config.Headers go with every kind, before the kind's own; the Target
// names the workload.
func TestWorkloadTarget(t *testing.T) {
	w, err := ParseWorkload([]byte(goodWorkload))
	if err != nil {
		t.Fatal(err)
	}
	w.Source = "mixed.toml"
	cfg := DefaultConfig()
	cfg.Workload = w
	cfg.Headers = []string{"Authorization: x"}
	kinds, table, err := newKinds(&cfg, "cafe0123")
	if err != nil || len(table) != 20 {
		t.Fatal(err)
	}
	raw, _, _ := newRenderer(0, 1, 3, 1, nil).appendRequest(nil, kinds[1].tmpl)
	if !strings.Contains(string(raw), "Authorization: x\r\nContent-Type: application/json") || !strings.Contains(string(raw), "lt-cafe0123-0") {
		t.Errorf("commit request %q", raw)
	}
	if got := cfg.targetName(); got != "http://127.0.0.1:8080 (workload mixed.toml)" {
		t.Errorf("target %q", got)
	}
	if _, err := Run(context.Background(), Config{}); err == nil {
		t.Error("an empty config ran")
	}
}
