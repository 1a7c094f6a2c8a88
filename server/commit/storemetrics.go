package commit

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"weaseldb/server/metrics"
	"weaseldb/server/store"
)

// registerStoreMetrics exposes the sequencer's request-id memory on /metrics
// (how many ids it holds and, when commit.max_request_ids sets a cap, what
// reaching it did) and the subscribers cut as slow consumers. The values
// are atomics the sequence stage publishes once per batch, read only when
// /metrics is scraped, so the commit path pays nothing per request.
func registerStoreMetrics(m *metrics.Metrics, st *store.Store) error {
	s := st.Sequencer.Stats()
	gauge := func(name, help string, v func() int64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(v()) })
	}
	counter := func(name, help string, v func() int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(v()) })
	}
	for _, c := range []prometheus.Collector{
		gauge("weaseldb_request_ids_remembered", "Request ids of commits remembered (duplicates within retention are answered, not applied).", s.RememberedIDs.Load),
		gauge("weaseldb_request_ids_banned", "Request ids banned because GET /v1/status answered not_found for them.", s.BannedIDs.Load),
		gauge("weaseldb_request_ids_bytes", "Bytes the sequence stage holds for remembered and banned request ids together (one FIFO of records and one table serve both, about 40 bytes per id); the memory a cap or retention bounds.", s.RequestIDBytes.Load),
		gauge("weaseldb_request_ids_max", "commit.max_request_ids: the cap on remembered and banned ids together; 0 means no cap (the default: retention alone decides).", s.MaxRequestIDs.Load),
		counter("weaseldb_request_ids_dropped_by_cap_total", "Remembered or banned ids dropped because commit.max_request_ids was reached, while still within retention.", s.DroppedByCap.Load),
		counter("weaseldb_commits_refused_banned_total", "Commits refused (request_id_banned): status had answered not_found for their id.", s.RefusedBanned.Load),
		counter("weaseldb_commits_refused_unverifiable_total", "Commits refused (request_id_unverifiable): the cap dropped ids they could be a retry of.", s.RefusedUnverifiable.Load),
		counter("weaseldb_subscribers_cut_slow_total", "GET /v1/subscribe streams ended as slow consumers (over max_buffer_size_bytes for longer than the grace, or trimmed past).", st.Log.SlowConsumersCut),
	} {
		if err := m.Registry.Register(c); err != nil {
			return fmt.Errorf("commit pipeline metrics: %w", err)
		}
	}
	return nil
}
