package pipebench

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/affinity"
	"weaseldb/internal/procstat"
	"weaseldb/server/pipeline"
)

// benchCase runs one case with b.N items in one timed run (ns/op is ns per
// item) and reports the process's CPU per item.
func benchCase(b *testing.B, c Case) {
	r, err := Start(c, Hooks{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	r.Run(min(c.Items, 10_000)) // warm up
	cpu0, _ := procstat.SelfCPU()
	b.ResetTimer()
	r.Run(b.N)
	b.StopTimer()
	cpu1, _ := procstat.SelfCPU()
	b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/item")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
}

// runFamily runs a family's cases as sub-benchmarks named like the binary's
// cases without the family prefix, e.g. BenchmarkBatch/impl=pipeline/batch=64.
func runFamily(b *testing.B, family string) {
	for _, c := range AllCases() {
		if c.Family != family {
			continue
		}
		b.Run(strings.TrimPrefix(c.Name, family+"/"), func(b *testing.B) { benchCase(b, c) })
	}
}

func BenchmarkSingleStage(b *testing.B)  { runFamily(b, FamilySingleStage) }
func BenchmarkBatch(b *testing.B)        { runFamily(b, FamilyBatch) }
func BenchmarkBatchSpin(b *testing.B)    { runFamily(b, FamilyBatchSpin) }
func BenchmarkWaitStrategy(b *testing.B) { runFamily(b, FamilyWaitStrategy) }

// Every case runs and shuts down, for every implementation (no timing).
func TestEveryCaseRuns(t *testing.T) {
	for _, c := range AllCases() {
		t.Run(c.Name, func(t *testing.T) {
			c.Items = 300
			res, err := Measure(c, Options{Runs: 2, Warmup: 1})
			if err != nil {
				t.Fatal(err)
			}
			if res.NsPerItem <= 0 || res.ItemsPerSec <= 0 || res.NsPerItemMin > res.NsPerItemMax {
				t.Fatalf("implausible result %+v", res)
			}
		})
	}
}

func TestCaseNamesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range AllCases() {
		if seen[c.Name] {
			t.Fatalf("two cases named %s", c.Name)
		}
		seen[c.Name] = true
	}
}

func TestSetRatios(t *testing.T) {
	rs := []Result{
		{Case: Case{Family: "a"}, ItemsPerSec: 100},
		{Case: Case{Family: "a"}, ItemsPerSec: 50},
		{Case: Case{Family: "b"}, ItemsPerSec: 10},
		{Case: Case{Family: "b"}, ItemsPerSec: 30},
	}
	SetRatios(rs)
	for i, want := range []float64{1, 0.5, 1, 3} {
		if rs[i].RatioToFirst != want {
			t.Fatalf("result %d ratio %v, want %v", i, rs[i].RatioToFirst, want)
		}
	}
}

// MeasureCases calls before and after around each case, in order, and the
// results it hands after already carry their family's ratio (behaviour, no
// timing: the first case's ratio is 1, every ratio positive).
func TestMeasureCases(t *testing.T) {
	var cases []Case
	for _, c := range FamilyCases([]string{FamilySingleStage, FamilyBatch})[:5] {
		c.Items = 300
		cases = append(cases, c)
	}
	var log []string
	results, err := MeasureCases(cases, Options{Runs: 1},
		func(c Case) { log = append(log, "before "+c.Name) },
		func(r Result) {
			log = append(log, "after "+r.Name)
			if r.RatioToFirst <= 0 {
				t.Errorf("%s: ratio %v", r.Name, r.RatioToFirst)
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(cases) || results[0].RatioToFirst != 1 || results[3].RatioToFirst != 1 {
		t.Fatalf("%d results, ratios %v and %v", len(results), results[0].RatioToFirst, results[3].RatioToFirst)
	}
	for i, c := range cases {
		if log[2*i] != "before "+c.Name || log[2*i+1] != "after "+c.Name {
			t.Fatalf("calls %v", log)
		}
	}
}

func TestHookErrorStopsStart(t *testing.T) {
	c := AllCases()[0]
	_, err := Start(c, Hooks{StageStart: func(int) error { return errTest }})
	if err == nil || !strings.Contains(err.Error(), "stage 0") {
		t.Fatalf("got %v, want the hook's error naming stage 0", err)
	}
}

type testError string

func (e testError) Error() string { return string(e) }

const errTest = testError("hook failed")

func TestMeasureIdleParks(t *testing.T) {
	res, err := MeasureIdle(pipeline.WaitIfStageEmpty, 200*time.Millisecond, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if res.CoreFraction > 0.25 {
		t.Fatalf("idle WaitIfStageEmpty pipeline used %.0f%% of a core", 100*res.CoreFraction)
	}
}

// BenchmarkLatencyLocking separates what pinning costs a hand-off from
// what the CPU placement does: the latency family's low-rate one-way case
// with b.N items, its goroutines free (GOMAXPROCS as is), locked to their
// threads only (runtime.LockOSThread, no affinity), or pinned as the
// family's dedicated cases pin them (the last two with GOMAXPROCS 3, as
// those cases run). Reported: the hand-off's p50 and p99 in ns, and the
// process's CPU per item.
//
//	go test -run '^$' -bench LatencyLocking -benchtime 300x ./pipebench
func BenchmarkLatencyLocking(b *testing.B) {
	allowed, err := affinity.AllowedCPUs()
	if err != nil || len(allowed) < 2 {
		b.Skip("needs 2 CPUs")
	}
	lock := func() error { runtime.LockOSThread(); return nil }
	pin := func(cpu int) func() error { return func() error { return affinity.PinCurrentThread([]int{cpu}) } }
	for _, s := range pipeline.Strategies() {
		for _, v := range []struct {
			name  string
			hooks LatencyHooks
			procs int
		}{
			{"free", LatencyHooks{}, 0},
			{"locked", LatencyHooks{Driver: lock, Stage: lock}, 3},
			{"pinned", LatencyHooks{Driver: pin(allowed[0]), Stage: pin(allowed[1]), Pinned: true}, 3},
		} {
			b.Run(fmt.Sprintf("strategy=%s/threads=%s", s, v.name), func(b *testing.B) {
				c := LatencyCase{Name: b.Name(), Impl: ImplPipeline, Strategy: s, Kind: KindOneWay, Rate: RateLow,
					Samples: b.N, Interval: DefaultLatencyInterval, MaxDuration: time.Hour, LgSlots: LatencyLgSlots}
				if v.procs > 0 {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(v.procs))
				}
				res, err := MeasureLatency(c, v.hooks)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Hist.ValueAtQuantile(50)), "p50-ns")
				b.ReportMetric(float64(res.Hist.ValueAtQuantile(99)), "p99-ns")
				b.ReportMetric(float64(res.CPU.Nanoseconds())/float64(res.Measured), "cpu-ns/item")
			})
		}
	}
}
