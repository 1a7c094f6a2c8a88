package pipebench

// The latency family: single items handed from a producer to a stage, one
// way (publish to pickup) and as a ping-pong round trip, after the LMAX
// Disruptor's latency tests.
//
// Who owns what: MeasureLatency starts a driver goroutine (the producer, or
// the ping side) and one stage goroutine (the consumer, or the pong side)
// per measurement, so threads pinned by the hooks end with them. Each
// histogram is written by one goroutine only (the stage's by the stage, the
// round trip's by the driver) and read by MeasureLatency after that
// goroutine has signalled it is done over a channel, which orders the reads
// after the writes.

import (
	"fmt"
	"runtime"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/internal/procstat"
	"weaseldb/server/pipeline"
)

// FamilyLatency is the latency family's name.
const FamilyLatency = "latency"

// LatencyKind is what a latency case times.
type LatencyKind string

const (
	// KindOneWay: from the producer's publish (its timestamp, taken just
	// before Release) to the stage's pickup (a timestamp taken when Acquire
	// returns): one hand-off.
	KindOneWay LatencyKind = "one_way"
	// KindRoundTrip: ping publishes to pipeline A, pong picks it up and
	// publishes it to pipeline B, ping picks it up: two hand-offs, timed on
	// one thread, so no clock is compared across CPUs.
	KindRoundTrip LatencyKind = "round_trip"
)

// LatencyRate is how items are spaced.
type LatencyRate string

const (
	// RateLow: one item per Interval, so the stage sits idle between items
	// and a parking strategy has parked: the wake-up shows.
	RateLow LatencyRate = "low"
	// RateSaturation: items back to back (one way: as fast as the producer
	// publishes, queueing in the ring included; round trip: the next ping
	// as soon as the last pong is back).
	RateSaturation LatencyRate = "saturation"
)

// Parameters of the latency family.
const (
	LatencyLgSlots = 8 // a ring of 256, as the wait_strategy family's
	// DefaultLatencyInterval is 4x the pipeline's default IdleSpin (50 µs):
	// a WaitIfUpstreamIdle stage has parked well before the next item, a
	// WaitIfStageEmpty one (5 µs spin) long before.
	DefaultLatencyInterval = 200 * time.Microsecond
	DefaultLatencySamples  = 300 // measured items per low-rate case
	// SaturationFactor: a saturation case measures this many times the
	// low-rate samples (they cost microseconds, not an interval each).
	SaturationFactor = 40
	// DefaultLatencyMaxDuration ends a case early (Truncated) on a machine
	// so busy that its samples would take longer.
	DefaultLatencyMaxDuration = 500 * time.Millisecond
	latencyWarmup             = 100 // unrecorded items or round trips first
	// LatencyHistMax is the histograms' highest trackable value; above it
	// a value is clamped to it.
	LatencyHistMax = int64(10 * time.Second)
)

const (
	stopMark   = ^uint64(0) // ends a measurement
	warmupMark = 0          // an item that is not recorded
)

// LatencyCase is one latency configuration. Cores are not part of it: the
// caller measures each case with and without pinning hooks.
type LatencyCase struct {
	Name     string
	Impl     Impl                  // ImplPipeline or ImplChannel
	Strategy pipeline.WaitStrategy // pipeline only
	Kind     LatencyKind
	Rate     LatencyRate
	Samples  int           // measured items (one way) or round trips
	Interval time.Duration // RateLow: sleep between items; 0 at saturation
	// MaxDuration ends the measured part early, if it is reached first.
	MaxDuration time.Duration
	LgSlots     int
}

// StrategyName is the case's strategy as the JSON shows it ("-" for channels).
func (c LatencyCase) StrategyName() string {
	if c.Impl != ImplPipeline {
		return "-"
	}
	return c.Strategy.String()
}

// LatencyParams sizes the family; zero fields take the defaults.
type LatencyParams struct {
	Samples     int
	Interval    time.Duration
	MaxDuration time.Duration
}

// LatencyCases lists the family: per kind, per rate, each strategy of the
// pipeline and then a channel (the hand-off a Go programmer would use).
func LatencyCases(p LatencyParams) []LatencyCase {
	if p.Samples < 1 {
		p.Samples = DefaultLatencySamples
	}
	if p.Interval <= 0 {
		p.Interval = DefaultLatencyInterval
	}
	if p.MaxDuration <= 0 {
		p.MaxDuration = DefaultLatencyMaxDuration
	}
	var cases []LatencyCase
	for _, kind := range []LatencyKind{KindOneWay, KindRoundTrip} {
		for _, rate := range []LatencyRate{RateLow, RateSaturation} {
			base := LatencyCase{Kind: kind, Rate: rate, Samples: p.Samples, Interval: p.Interval, MaxDuration: p.MaxDuration, LgSlots: LatencyLgSlots}
			if rate == RateSaturation {
				base.Samples, base.Interval = p.Samples*SaturationFactor, 0
			}
			for _, s := range pipeline.Strategies() {
				c := base
				c.Impl, c.Strategy = ImplPipeline, s
				cases = append(cases, c)
			}
			c := base
			c.Impl = ImplChannel
			cases = append(cases, c)
		}
	}
	for i := range cases {
		c := &cases[i]
		c.Name = fmt.Sprintf("%s/impl=%s", FamilyLatency, c.Impl)
		if c.Impl == ImplPipeline {
			c.Name += "/strategy=" + c.Strategy.String()
		}
		c.Name += fmt.Sprintf("/kind=%s/rate=%s", c.Kind, c.Rate)
	}
	return cases
}

// LatencyHooks run first on the goroutines a measurement starts: the
// driver (producer, or ping) and the stage (or pong). Both goroutines end
// with the measurement, so a thread the hooks pin ends with them.
type LatencyHooks struct {
	Driver func() error
	Stage  func() error
	// Pinned: the hooks pin each goroutine to a CPU of its own, so the
	// pipeline's unbounded spins must not yield (pipeline.MarkPinned).
	Pinned bool
}

// LatencyResult is one measured case.
type LatencyResult struct {
	LatencyCase
	Hist      *hdrhistogram.Histogram // ns: hand-off (one way) or round trip
	Measured  int                     // items or round trips recorded
	Wall      time.Duration           // the measured part
	CPU       time.Duration           // the process's user+system CPU over it
	Truncated bool                    // MaxDuration ended it before Samples
}

// NewLatencyHistogram is the histogram every latency case records into:
// 1 ns to LatencyHistMax, 3 significant digits.
func NewLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, LatencyHistMax, 3)
}

func record(h *hdrhistogram.Histogram, d int64) {
	// A negative difference cannot come from one monotonic clock on one
	// thread; across CPUs it would mean unsynchronised clocks: count it as
	// 0 rather than lose it.
	_ = h.RecordValue(min(max(d, 0), LatencyHistMax))
}

// MeasureLatency runs one case: warm-up items, then the measured ones.
func MeasureLatency(c LatencyCase, h LatencyHooks) (LatencyResult, error) {
	if c.Samples < 1 || c.LgSlots < 0 {
		return LatencyResult{}, fmt.Errorf("pipebench: case %s: need samples >= 1", c.Name)
	}
	var l latencyRun
	switch {
	case c.Impl == ImplPipeline && c.Kind == KindOneWay:
		l = &pipelineOneWay{}
	case c.Impl == ImplPipeline && c.Kind == KindRoundTrip:
		l = &pipelineRoundTrip{}
	case c.Impl == ImplChannel && c.Kind == KindOneWay:
		l = &channelOneWay{}
	case c.Impl == ImplChannel && c.Kind == KindRoundTrip:
		l = &channelRoundTrip{}
	default:
		return LatencyResult{}, fmt.Errorf("pipebench: case %s: no latency runner for impl %q kind %q", c.Name, c.Impl, c.Kind)
	}
	if err := l.init(c); err != nil {
		return LatencyResult{}, fmt.Errorf("pipebench: case %s: %w", c.Name, err)
	}
	type outcome struct {
		res LatencyResult
		err error
	}
	out := make(chan outcome, 1)
	go func() {
		res, err := drive(c, h, l)
		out <- outcome{res, err}
	}()
	o := <-out
	if o.err != nil {
		return LatencyResult{}, fmt.Errorf("pipebench: case %s: %w", c.Name, o.err)
	}
	return o.res, nil
}

// latencyRun is one implementation of one kind. The driver goroutine calls
// send for every item (one way) or round (round trip) and stop at the end;
// stage runs on the stage goroutine until it sees the stop.
type latencyRun interface {
	init(c LatencyCase) error
	pinStage()  // on the stage goroutine, when pinned
	pinDriver() // on the driver goroutine, when pinned
	stage()
	send(record bool) // one item or round trip
	stop()
	hist() *hdrhistogram.Histogram // read after stop returned
}

// drive is the driver goroutine: hooks, the stage goroutine, warm-up, the
// measured part, stop.
func drive(c LatencyCase, h LatencyHooks, l latencyRun) (LatencyResult, error) {
	if h.Driver != nil {
		if err := h.Driver(); err != nil {
			return LatencyResult{}, fmt.Errorf("driver: %w", err)
		}
	}
	if h.Pinned {
		l.pinDriver()
	}
	ready := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if h.Stage != nil {
			if err := h.Stage(); err != nil {
				ready <- fmt.Errorf("stage: %w", err)
				return
			}
		}
		if h.Pinned {
			l.pinStage()
		}
		ready <- nil
		l.stage()
	}()
	if err := <-ready; err != nil {
		<-done
		return LatencyResult{}, err
	}
	for range latencyWarmup {
		l.send(false)
	}
	cpu0, err := procstat.SelfCPU()
	if err != nil {
		l.stop()
		<-done
		return LatencyResult{}, err
	}
	start := time.Now()
	deadline := start.Add(c.MaxDuration)
	res := LatencyResult{LatencyCase: c}
	for res.Measured < c.Samples {
		if c.Interval > 0 {
			time.Sleep(c.Interval)
		}
		l.send(true)
		res.Measured++
		if c.MaxDuration > 0 && res.Measured%64 == 0 && time.Now().After(deadline) {
			res.Truncated = res.Measured < c.Samples
			break
		}
	}
	res.Wall = time.Since(start)
	cpu1, err := procstat.SelfCPU()
	l.stop()
	<-done
	if err != nil {
		return LatencyResult{}, err
	}
	res.CPU = cpu1 - cpu0
	res.Hist = l.hist()
	if got := res.Hist.TotalCount(); got != int64(res.Measured) {
		return LatencyResult{}, fmt.Errorf("recorded %d values for %d items", got, res.Measured)
	}
	return res, nil
}

// LatencyRow is one case on one kind of cores, measured or skipped.
type LatencyRow struct {
	Case       LatencyCase
	Cores      string // artifacts.CoresDedicated or artifacts.CoresShared
	Skip       string // why it was not measured; "" when it was
	Plan       string // what ran where (the plan's Why, or the shared plan)
	GOMAXPROCS int    // the case's GOMAXPROCS
	Result     LatencyResult
}

// MeasureLatencyFamily measures each case on dedicated cores (by plan; the
// row skipped, for plan.Skip, where it has none) and then on shared ones,
// described by sharedPlan (interleaved, so a neighbour's burst hits both
// alike); each calls row, if not nil, as it is done, so a table shows it as
// it goes. A dedicated case pins its goroutines to plan's CPUs and runs with
// GOMAXPROCS raised for them; GOMAXPROCS is set back after each case.
func MeasureLatencyFamily(cases []LatencyCase, plan LatencyPlan, sharedPlan string, row func(LatencyRow)) ([]LatencyRow, error) {
	base := runtime.GOMAXPROCS(0)
	var rows []LatencyRow
	for _, c := range cases {
		for _, cores := range []string{artifacts.CoresDedicated, artifacts.CoresShared} {
			r := LatencyRow{Case: c, Cores: cores, GOMAXPROCS: base, Plan: sharedPlan}
			var hooks LatencyHooks
			if cores == artifacts.CoresDedicated {
				r.Plan = plan.Why
				if !plan.Dedicated {
					r.Skip = plan.Skip
				} else {
					p, s := plan.Producer, plan.Stage
					hooks = LatencyHooks{Pinned: true,
						Driver: func() error { return affinity.PinCurrentThread([]int{p}) },
						Stage:  func() error { return affinity.PinCurrentThread([]int{s}) }}
					r.GOMAXPROCS = affinity.GOMAXPROCSFor(2, base)
				}
			}
			if r.Skip == "" {
				runtime.GOMAXPROCS(r.GOMAXPROCS)
				res, err := MeasureLatency(c, hooks)
				runtime.GOMAXPROCS(base)
				if err != nil {
					return nil, err
				}
				r.Result = res
			}
			rows = append(rows, r)
			if row != nil {
				row(r)
			}
		}
	}
	return rows, nil
}
