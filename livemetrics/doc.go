// Package livemetrics serves a running load_tester's numbers to Prometheus
// (--metrics-addr): the requests by phase and outcome, failed ones by
// kind, in-flight requests, open connections, the phase, the target and
// achieved rates and a latency histogram (classic buckets and a native
// one). It is fed from the engine's per-interval snapshots
// (loadtester.Config.OnSnapshot), never from the hot path, so a scrape
// costs the load nothing; docs/load_tester.md, "Live metrics", lists every
// metric.
package livemetrics
