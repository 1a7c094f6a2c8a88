package artifacts

// SustainedFile is the run directory's sustained run (`report setups
// --sustain S`): each setup loaded once for S seconds without a break, the
// server sampled every window beside it.
const SustainedFile = "sustained.json"

// SustainedVersion is Sustained's schema version.
const SustainedVersion = 1

// Sustained is every setup's sustained run.
type Sustained struct {
	Version  int            `json:"version"`
	SustainS float64        `json:"sustain_s"` // measured load per setup, after WarmupS
	WarmupS  float64        `json:"warmup_s"`
	WindowS  float64        `json:"window_s"` // the sampling window
	Runs     []SustainedRun `json:"runs"`
}

// SustainedRun is one setup's sustained run: its load result and the
// server sampled window by window through it.
type SustainedRun struct {
	Setup  string `json:"setup"`  // Setup.Name
	Status string `json:"status"` // StatusMeasured or StatusFailed
	Reason string `json:"reason,omitempty"`
	Load   string `json:"load,omitempty"` // load_tester's result, relative to the run directory
	// Windows in order; the first starts when the warm-up ends.
	Windows []SustainedWindow `json:"windows"`
	// SampleError is why a window's metrics or RSS could not be read (the
	// windows read stand).
	SampleError string `json:"sample_error,omitempty"`
}

// SustainedWindow is the server over one window: what it served (from its
// own per-loop request counters), the garbage collector's pauses (from Go's
// go_gc_duration_seconds on its /metrics) and its resident memory at the
// window's end (/proc/PID/status VmRSS).
type SustainedWindow struct {
	StartS   float64 `json:"start_s"` // since the measured load began
	EndS     float64 `json:"end_s"`
	Requests float64 `json:"requests"` // weaseldb_loop_requests_total, summed over loops, in the window
	// GCCount and GCPauseS are the collections and their stop-the-world
	// pause time in the window (go_gc_duration_seconds' count and sum).
	GCCount  float64 `json:"gc_count"`
	GCPauseS float64 `json:"gc_pause_s"`
	// GCPauseMaxS is go_gc_duration_seconds' quantile 1 at the window's
	// end: the longest of the runtime's recent pauses.
	GCPauseMaxS float64 `json:"gc_pause_max_s"`
	RSSBytes    int64   `json:"rss_bytes"`
}

// RatePerS is the window's requests per second (0 for an empty window).
func (w SustainedWindow) RatePerS() float64 {
	if d := w.EndS - w.StartS; d > 0 {
		return w.Requests / d
	}
	return 0
}
