package metrics

import (
	"bufio"
	"bytes"
	"flag"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/scrape_golden.txt from the current code")

// knownLatencies cover every bucket of the request latency histogram, its
// boundaries exactly and a nanosecond past them, zero and a negative
// duration (a clock that stepped back).
var knownLatencies = []time.Duration{
	0, -5, 1, 999, 1000, 1001, 2500, 3999, 4000, 4001, 15999, 16000, 16001,
	64000, 64001, 100_000, 256_000, 256_001, 1_024_000, 1_024_001, 3_000_000,
	4_096_000, 4_096_001, 16_384_000, 16_384_001, 65_536_000, 65_536_001,
	262_144_000, 262_144_001, 999_999_999, 1_000_000_000, 1_048_576_000,
	1_048_576_001, 4_194_304_000, 4_194_304_001, 9 * time.Second,
}

var knownRoutes = []Route{RouteOK, RouteCommit, RouteStatus, RouteNotFound, RouteInvalid, RouteSubscribe}

var knownStatuses = []int{200, 201, 404, 409, 418, 503}

// knownRequest is request i of the known sequence.
func knownRequest(i int) (Route, int, time.Duration) {
	return knownRoutes[i%len(knownRoutes)], knownStatuses[(i/2)%len(knownStatuses)],
		knownLatencies[i%len(knownLatencies)] + time.Duration(i/len(knownLatencies))*137
}

const knownRequests = 500

// knownStageBatches are (size, busy) pairs covering the batch size and
// stage time buckets.
var knownStageBatches = []struct {
	size int
	busy time.Duration
}{
	{1, 0}, {1, 99}, {2, 100}, {3, 101}, {4, 399}, {5, 400}, {16, 401}, {17, 1599},
	{64, 1600}, {100, 1601}, {1000, 6400}, {4096, 25_600}, {8192, 102_400},
	{8193, 409_600}, {20000, 1_638_400}, {1, 6_553_601}, {1, 26_214_400},
	{1, 104_857_600}, {1, 419_430_400}, {1, 419_430_401}, {1, 2 * time.Second},
}

// knownStageWaits cover every bucket of the stage wait histogram: each
// bound (100 ns × 3^k) exactly and a nanosecond past it, zero, a negative
// wait (two threads' clock reads) and one past the last bound.
var knownStageWaits = func() []time.Duration {
	w := []time.Duration{0, -5, 1, 99}
	bound := 100.0
	for range 15 {
		w = append(w, time.Duration(bound), time.Duration(bound)+1)
		bound *= 3
	}
	return append(w, 2*time.Second)
}()

// scrapeOf is the lines of a scrape that the request path records (the
// request, stage and push metrics), in the scrape's order.
func scrapeOf(t *testing.T, m *Metrics) string {
	t.Helper()
	out, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var kept strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "weaseldb_http_request") || strings.Contains(line, "weaseldb_pipeline_") {
			kept.WriteString(line)
			kept.WriteByte('\n')
		}
	}
	return kept.String()
}

// recordKnownStages records the known stage batches and pushes.
func recordKnownStages(m *Metrics) {
	for i, sb := range knownStageBatches {
		m.StageBatch(i%len(StageNames), sb.size, sb.busy)
		m.Push(sb.size)
	}
	for i, w := range knownStageWaits {
		m.StageWait(i%len(StageNames), w)
	}
}

// The stage wait histogram is client_golang's, bucket for bucket: the
// known waits recorded here and observed by a client_golang histogram with
// the same buckets scrape the same (the golden file's wait lines are
// written by this package's code, so this is what pins them).
func TestStageWaitIsClientGolangsHistogram(t *testing.T) {
	m := New()
	ref := &Metrics{Registry: prometheus.NewRegistry()}
	vec := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "weaseldb_pipeline_stage_wait_seconds",
		Buckets: prometheus.ExponentialBuckets(1e-7, 3, 15)}, []string{"stage"})
	ref.Registry.MustRegister(vec)
	for i, w := range knownStageWaits {
		m.StageWait(i%len(StageNames), w)
		vec.WithLabelValues(StageNames[i%len(StageNames)]).Observe(w.Seconds())
	}
	samples := func(m *Metrics) string {
		var b strings.Builder
		for _, l := range strings.Split(scrapeOf(t, m), "\n") {
			if strings.HasPrefix(l, "weaseldb_pipeline_stage_wait_seconds") {
				b.WriteString(l + "\n")
			}
		}
		return b.String()
	}
	want, got := samples(ref), samples(m)
	if want == "" {
		t.Fatal("the reference histogram scraped nothing")
	}
	if diff := sameScrape(want, got); diff != "" {
		t.Errorf("the stage wait histogram differs from client_golang's:\n%s", diff)
	}
}

// What a scrape shows for a known sequence of requests, stage batches and
// pushes is pinned by a golden file written by the per-request code this
// package had before it recorded per batch (client_golang's histograms):
// every way of recording the same sequence must produce it, byte for byte
// but for the last digits of a sum (sameScrape).
func TestScrapeOfKnownSequence(t *testing.T) {
	cases := []struct {
		name   string
		record func(m *Metrics)
	}{
		{"one Request call per request", func(m *Metrics) {
			for i := 0; i < knownRequests; i++ {
				m.Request(knownRequest(i))
			}
		}},
		{"a tally flushed once per batch", func(m *Metrics) {
			recordInBatches(m.NewRequestTally(), 0, knownRequests, 1)
		}},
		{"tallies of three threads flushing at once", func(m *Metrics) {
			var wg sync.WaitGroup
			for thread := 0; thread < 3; thread++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					recordInBatches(m.NewRequestTally(), thread, knownRequests, 3)
				}()
			}
			wg.Wait()
		}},
		{"a tally and Request calls mixed", func(m *Metrics) {
			t := m.NewRequestTally()
			for i := 0; i < knownRequests; i++ {
				if i%3 == 0 {
					m.Request(knownRequest(i))
				} else {
					t.Add(knownRequest(i))
				}
				if i%7 == 0 {
					t.Flush()
				}
			}
			t.Flush()
		}},
	}
	const golden = "testdata/scrape_golden.txt"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := New()
			tc.record(m)
			recordKnownStages(m)
			got := scrapeOf(t, m)
			if *updateGolden {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := sameScrape(string(want), got); diff != "" {
				t.Errorf("scrape differs from %s:\n%s", golden, diff)
			}
		})
	}
}

// recordInBatches adds the known requests thread, thread+threads, ... to
// t in batches of 1 to 17 requests, flushing after each.
func recordInBatches(t *RequestTally, thread, n, threads int) {
	batch := 0
	for i := thread; i < n; i += threads {
		t.Add(knownRequest(i))
		if batch++; batch > i%17 {
			t.Flush()
			batch = 0
		}
	}
	t.Flush()
}

// sameScrape lists the lines that differ, want first. A sum may differ in
// its last digits: client_golang added each observation's seconds to a
// float, whose rounding depends on the order of the adds (several release
// threads add at once); the sums here are kept in integer nanoseconds and
// are exact. Everything else (names, labels, buckets, counts) must match
// byte for byte.
func sameScrape(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl && !sameSum(wl, gl) {
			b.WriteString("- " + wl + "\n+ " + gl + "\n")
		}
	}
	return b.String()
}

// sameSum reports whether two sample lines are the same sum (or busy
// seconds total, a stage's batch seconds summed) within float rounding.
func sameSum(want, got string) bool {
	wn, wv, ok1 := strings.Cut(want, " ")
	gn, gv, ok2 := strings.Cut(got, " ")
	if !ok1 || !ok2 || wn != gn {
		return false
	}
	name, _, _ := strings.Cut(wn, "{")
	if !strings.HasSuffix(name, "_sum") && name != "weaseldb_pipeline_stage_busy_seconds_total" {
		return false
	}
	w, err1 := strconv.ParseFloat(wv, 64)
	g, err2 := strconv.ParseFloat(gv, 64)
	return err1 == nil && err2 == nil && math.Abs(w-g) <= 1e-12*math.Max(math.Abs(w), 1)
}
