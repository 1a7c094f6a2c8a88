package pipebench

import (
	"errors"
	"strings"
	"testing"
	"time"

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

func TestMeasureClock(t *testing.T) {
	c := MeasureClock(1000)
	if c.Reads != 1000 || c.ReadNs <= 0 || c.ResolutionNs < 0 {
		t.Fatalf("%+v", c)
	}
}
