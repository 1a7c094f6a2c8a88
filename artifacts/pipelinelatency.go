package artifacts

// PipelineLatency is a bench_pipeline latency case's figures in ns: the
// hand-off from publish to pickup (kind "one_way") or the ping-pong round
// trip, two hand-offs (kind "round_trip"), from one HdrHistogram.
type PipelineLatency struct {
	P50   int64   `json:"p50"`
	P99   int64   `json:"p99"`
	P999  int64   `json:"p999"`
	Max   int64   `json:"max"`
	Min   int64   `json:"min"`
	Mean  float64 `json:"mean"`
	Count int64   `json:"count"`
	// Histogram is the whole distribution, HdrHistogram V2 compressed and
	// base64-encoded ("HISTF..."), as load_tester writes its own.
	Histogram string `json:"histogram"`
}

// PipelineClock is what reading the monotonic clock cost in the run that
// timed the latency family: two reads time a hand-off, so no figure below
// about ReadNs resolves anything.
type PipelineClock struct {
	Source       string  `json:"source,omitempty"` // the kernel's clocksource (Linux), e.g. "tsc"
	Reads        int     `json:"reads"`
	ReadNs       float64 `json:"read_ns"`       // mean cost of one read, back to back
	ResolutionNs int64   `json:"resolution_ns"` // smallest non-zero step between two reads
}
