package runner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// stageBusyMetric is the server's counter of the time each commit stage
// spent processing batches (server/metrics).
const stageBusyMetric = "weaseldb_pipeline_stage_busy_seconds_total"

// scrapeStageBusy reads the server's /metrics over its unix socket and
// returns each stage's busy seconds so far, by stage name.
func scrapeStageBusy(ctx context.Context, socket string) (map[string]float64, error) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
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
	fam, ok := families[stageBusyMetric]
	if !ok {
		return nil, fmt.Errorf("GET /metrics: no %s", stageBusyMetric)
	}
	busy := map[string]float64{}
	for _, m := range fam.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "stage" {
				busy[l.GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	return busy, nil
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
