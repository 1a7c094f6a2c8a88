package pipebench

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/server/pipeline"
)

// The family: per kind and rate, the three strategies and a channel.
func TestLatencyCases(t *testing.T) {
	cases := LatencyCases(LatencyParams{})
	if len(cases) != 16 {
		t.Fatalf("%d cases, want 16 (2 kinds x 2 rates x (3 strategies + channel))", len(cases))
	}
	names := map[string]bool{}
	for _, c := range cases {
		if names[c.Name] {
			t.Errorf("name %s twice", c.Name)
		}
		names[c.Name] = true
		switch c.Rate {
		case RateLow:
			if c.Interval != DefaultLatencyInterval || c.Samples != DefaultLatencySamples {
				t.Errorf("%s: interval %v samples %d", c.Name, c.Interval, c.Samples)
			}
		case RateSaturation:
			if c.Interval != 0 || c.Samples != DefaultLatencySamples*SaturationFactor {
				t.Errorf("%s: interval %v samples %d", c.Name, c.Interval, c.Samples)
			}
		}
	}
	if !names["latency/impl=pipeline/strategy=Never/kind=round_trip/rate=low"] || !names["latency/impl=channel/kind=one_way/rate=saturation"] {
		t.Errorf("names: %v", names)
	}
}

// Every case records one value per measured item, none negative, and a
// low-rate case spaces its items by at least the interval (behaviour, not
// speed: the bound is a lower one).
func TestEveryLatencyCaseRecords(t *testing.T) {
	for _, c := range LatencyCases(LatencyParams{Samples: 20, Interval: 100 * time.Microsecond, MaxDuration: 10 * time.Second}) {
		t.Run(c.Name, func(t *testing.T) {
			res, err := MeasureLatency(c, LatencyHooks{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Measured != c.Samples || res.Hist.TotalCount() != int64(c.Samples) || res.Truncated {
				t.Fatalf("measured %d, recorded %d, truncated %v; want %d", res.Measured, res.Hist.TotalCount(), res.Truncated, c.Samples)
			}
			if res.Hist.Min() < 0 || res.Hist.Max() <= 0 {
				t.Errorf("min %d max %d", res.Hist.Min(), res.Hist.Max())
			}
			if c.Rate == RateLow && res.Wall < time.Duration(c.Samples)*c.Interval {
				t.Errorf("wall %v for %d items %v apart", res.Wall, c.Samples, c.Interval)
			}
		})
	}
}

// MaxDuration ends a case early and says so.
func TestLatencyTruncates(t *testing.T) {
	c := LatencyCases(LatencyParams{})[0]
	c.Samples, c.Interval, c.MaxDuration = 1_000_000, 10*time.Microsecond, 5*time.Millisecond
	res, err := MeasureLatency(c, LatencyHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.Measured >= c.Samples || res.Hist.TotalCount() != int64(res.Measured) {
		t.Fatalf("truncated %v measured %d recorded %d", res.Truncated, res.Measured, res.Hist.TotalCount())
	}
}

// Pinning hooks run on both goroutines; a failing hook is reported and
// nothing hangs.
func TestLatencyHooks(t *testing.T) {
	allowed, err := affinity.AllowedCPUs()
	if err != nil {
		t.Skip(err)
	}
	pin := func() error { return affinity.PinCurrentThread(allowed[len(allowed)-1:]) }
	for _, kind := range []LatencyKind{KindOneWay, KindRoundTrip} {
		c := LatencyCase{Name: "pinned", Impl: ImplPipeline, Strategy: pipeline.Never, Kind: kind, Rate: RateSaturation, Samples: 50, LgSlots: 4}
		res, err := MeasureLatency(c, LatencyHooks{Driver: pin, Stage: pin, Pinned: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Measured != 50 {
			t.Fatalf("measured %d", res.Measured)
		}
	}
	boom := errors.New("boom")
	for _, h := range []LatencyHooks{{Driver: func() error { return boom }}, {Stage: func() error { return boom }}} {
		c := LatencyCase{Name: "failing", Impl: ImplPipeline, Kind: KindOneWay, Rate: RateSaturation, Samples: 5, LgSlots: 4}
		if _, err := MeasureLatency(c, h); !errors.Is(err, boom) || !strings.Contains(err.Error(), "failing") {
			t.Fatalf("err %v", err)
		}
	}
}

// MeasureLatencyFamily measures each case on dedicated cores and then on
// shared ones; without a dedicated plan the dedicated rows are skipped with
// its reason and the shared ones measured.
func TestMeasureLatencyFamily(t *testing.T) {
	cases := LatencyCases(LatencyParams{Samples: 5, Interval: 10 * time.Microsecond, MaxDuration: 5 * time.Second})
	cases = []LatencyCase{cases[0], cases[len(cases)-1]}
	plan := LatencyPlan{Skip: "not pinned"}
	var seen int
	rows, err := MeasureLatencyFamily(cases, plan, "shared plan", func(LatencyRow) { seen++ })
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || seen != 4 {
		t.Fatalf("%d rows, %d calls, want 4", len(rows), seen)
	}
	for i, r := range rows {
		wantCores := []string{artifacts.CoresDedicated, artifacts.CoresShared}[i%2]
		if r.Case.Name != cases[i/2].Name || r.Cores != wantCores || r.GOMAXPROCS != runtime.GOMAXPROCS(0) {
			t.Fatalf("row %d: %s on %s, GOMAXPROCS %d", i, r.Case.Name, r.Cores, r.GOMAXPROCS)
		}
		if wantCores == artifacts.CoresDedicated {
			if r.Skip != "not pinned" || r.Result.Hist != nil {
				t.Fatalf("row %d: %+v, want skipped", i, r)
			}
			continue
		}
		if r.Skip != "" || r.Plan != "shared plan" || r.Result.Measured != r.Case.Samples {
			t.Fatalf("row %d: skip %q plan %q measured %d", i, r.Skip, r.Plan, r.Result.Measured)
		}
	}
}

func TestMeasureClock(t *testing.T) {
	c := MeasureClock(1000)
	if c.Reads != 1000 || c.ReadNs <= 0 || c.ResolutionNs < 0 {
		t.Fatalf("%+v", c)
	}
}
