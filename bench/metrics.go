package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"weaseldb/artifacts"
)

// stageBusyMetric is the server's counter of the time each commit stage
// spent processing batches (server/metrics).
const stageBusyMetric = "weaseldb_pipeline_stage_busy_seconds_total"

// The server's per-loop counters (server/metrics): connections each event
// loop accepted and requests it routed, by loop index.
const (
	loopAcceptedMetric = "weaseldb_loop_connections_accepted_total"
	loopRequestsMetric = "weaseldb_loop_requests_total"
)

// stageWaitMetric is the server's histogram of how long a batch waited
// before each commit stage took it (server/metrics).
const stageWaitMetric = "weaseldb_pipeline_stage_wait_seconds"

// serverMetrics is what one scrape of /metrics gives the runner.
type serverMetrics struct {
	stageBusy map[string]float64        // busy seconds so far, by stage name
	stageWait map[string]*dto.Histogram // waits so far, by stage name (nil: not exported)
	loops     []artifacts.LoopServed    // by loop index
	loopsErr  error                     // why loops is missing
	gc        gcSummary                 // Go's go_gc_duration_seconds (ok false without it)
}

// gcMetric is the Go runtime's summary of its stop-the-world pauses, which
// the server's Go collector exports.
const gcMetric = "go_gc_duration_seconds"

// gcSummary is one scrape of gcMetric: collections and pause seconds so
// far, and the longest recent pause (its quantile 1).
type gcSummary struct {
	count, sumS, maxS float64
	ok                bool
}

// readGC reads gcMetric from the scraped families.
func readGC(families map[string]*dto.MetricFamily) gcSummary {
	fam, ok := families[gcMetric]
	if !ok || len(fam.GetMetric()) == 0 || fam.GetMetric()[0].GetSummary() == nil {
		return gcSummary{}
	}
	s := fam.GetMetric()[0].GetSummary()
	g := gcSummary{count: float64(s.GetSampleCount()), sumS: s.GetSampleSum(), ok: true}
	for _, q := range s.GetQuantile() {
		if q.GetQuantile() == 1 {
			g.maxS = q.GetValue()
		}
	}
	return g
}

// requestsServed is the loops' routed requests summed (0 without them).
func (m *serverMetrics) requestsServed() float64 {
	var n float64
	for _, l := range m.loops {
		n += float64(l.Requests)
	}
	return n
}

// scrapeStageBusy returns each stage's busy seconds so far, by stage name.
func scrapeStageBusy(ctx context.Context, socket string) (map[string]float64, error) {
	m, err := scrapeStageMetrics(ctx, socket)
	if err != nil {
		return nil, err
	}
	return m.stageBusy, nil
}

// scrapeStageMetrics reads the server's /metrics over its unix socket,
// an error when it lacks the stages' busy seconds.
func scrapeStageMetrics(ctx context.Context, socket string) (*serverMetrics, error) {
	m, err := scrapeMetrics(ctx, socket)
	if err != nil {
		return nil, err
	}
	if m.stageBusy == nil {
		return nil, fmt.Errorf("GET /metrics: no %s", stageBusyMetric)
	}
	return m, nil
}

// scrapeLoops reads each event loop's accepted connections and routed
// requests from the server's /metrics.
func scrapeLoops(ctx context.Context, socket string) ([]artifacts.LoopServed, error) {
	m, err := scrapeMetrics(ctx, socket)
	if err != nil {
		return nil, err
	}
	return m.loops, m.loopsErr
}

// scrapeMetrics reads the server's /metrics over its unix socket.
func scrapeMetrics(ctx context.Context, socket string) (*serverMetrics, error) {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://weaseldb/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET /metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: status %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET /metrics: %w", err)
	}
	// byLabel is one counter family's values by one label's value.
	byLabel := func(name, label string) (map[string]float64, bool) {
		fam, ok := families[name]
		if !ok {
			return nil, false
		}
		out := map[string]float64{}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					out[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
		return out, true
	}
	m := &serverMetrics{}
	m.stageBusy, _ = byLabel(stageBusyMetric, "stage")
	m.gc = readGC(families)
	m.stageWait = readHistograms(families, stageWaitMetric, "stage")
	acc, ok1 := byLabel(loopAcceptedMetric, "loop")
	reqs, ok2 := byLabel(loopRequestsMetric, "loop")
	if ok1 && ok2 {
		m.loops, m.loopsErr = loopCounts(acc, reqs)
	} else {
		m.loopsErr = fmt.Errorf("GET /metrics: no %s or %s (a server without per-loop counters)", loopAcceptedMetric, loopRequestsMetric)
	}
	return m, nil
}

// loopCounts turns the per-loop counts (by loop label) into one row per
// loop, in loop order; an error when the loops do not number 0..n-1.
func loopCounts(accepted, requests map[string]float64) ([]artifacts.LoopServed, error) {
	out := make([]artifacts.LoopServed, len(accepted))
	for i := range out {
		key := strconv.Itoa(i)
		a, okA := accepted[key]
		r, okR := requests[key]
		if !okA || !okR || len(requests) != len(accepted) {
			return nil, fmt.Errorf("GET /metrics: loops %v and %v do not number 0..%d", sortedKeys(accepted), sortedKeys(requests), len(accepted)-1)
		}
		out[i] = artifacts.LoopServed{Loop: i, Accepted: int64(a), Requests: int64(r)}
	}
	return out, nil
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// busyShares turns two scrapes wall seconds apart into each stage's busy
// share of that time.
func busyShares(before, after map[string]float64, wallS float64) map[string]float64 {
	out := map[string]float64{}
	for stage, b := range after {
		if a, ok := before[stage]; ok && wallS > 0 {
			out[stage] = (b - a) / wallS
		}
	}
	return out
}
