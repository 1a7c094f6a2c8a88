package result

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The collector builds every Snapshot on Run's goroutine and hands it to
// Config.OnSnapshot there; the callee owns it afterwards, but for Hist,
// which is the collector's and valid during the call only.

// Phase is where a run stands when a Snapshot is taken.
type Phase string

// A run goes warm-up (only with --warmup), measured, drain, done.
const (
	PhaseWarmup   Phase = "warmup"
	PhaseMeasured Phase = "measured"
	PhaseDrain    Phase = "drain"
	PhaseDone     Phase = "done"
)

// Phases lists every Phase in the order a run goes through them.
var Phases = []Phase{PhaseWarmup, PhaseMeasured, PhaseDrain, PhaseDone}

// Tally is the fate so far of the requests due in one phase of a run.
// Unfinished and Dropped are known only once the run is done.
type Tally struct {
	Answered     int64
	FailedByKind map[string]int64 // requests lost without a response, by kind
	Unfinished   int64
	Dropped      int64
}

// Snapshot is a run so far, taken at the end of each stats interval, when
// the drain begins and when the run is done (Config.OnSnapshot): what a
// live exporter shows while the run goes on. It comes from the interval
// merge, never from the hot path.
type Snapshot struct {
	Phase           Phase
	At              time.Time
	Measured        Tally // requests due in the measured window (the result's counts)
	Warmup          Tally // requests due in the warm-up
	InFlight        int64 // requests written and not yet answered or failed
	OpenConnections int
	TargetRate      float64 // req/s asked (0: closed loop)
	IntervalRate    float64 // answered req/s in the interval just closed
	// Hist holds the latencies (ns) the measured window gained since the
	// last Snapshot (nil or empty in the warm-up, the drain and done).
	Hist *hdrhistogram.Histogram
}
