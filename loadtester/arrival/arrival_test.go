package arrival

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseStages(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Stage
		err  string
	}{
		{"30s:1000,1m:20000,10s:0", []Stage{{30 * time.Second, 1000}, {time.Minute, 20000}, {10 * time.Second, 0}}, ""},
		{" 1s : 5 ", []Stage{{time.Second, 5}}, ""},
		{"", nil, "want DURATION:TARGET"},
		{"30s", nil, "stage 1"},
		{"30s:1000,", nil, "stage 2"},
		{"-1s:10", nil, "positive duration"},
		{"0s:10", nil, "positive duration"},
		{"1s:-5", nil, "target"},
		{"1s:NaN", nil, "target"},
		{"1s:1e10", nil, "target"},
		{"1x:10", nil, "duration"},
		{"999h:1,2h:1", nil, "1000h"},
	} {
		got, err := ParseStages(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--stages") {
				t.Errorf("%q: error %v, want one naming --stages and %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Fatalf("%q: %v, %v", tc.in, got, err)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: stage %d = %v, want %v", tc.in, i, got[i], tc.want[i])
			}
		}
		if again, err := ParseStages(FormatStages(got)); err != nil || len(again) != len(got) {
			t.Errorf("%q: FormatStages does not read back: %q, %v", tc.in, FormatStages(got), err)
		}
	}
}

func FuzzParseStages(f *testing.F) {
	for _, s := range []string{"30s:1000,1m:20000,10s:0", "1s:1", ":", ",,", "1h:1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		stages, err := ParseStages(s)
		if err != nil {
			return
		}
		p, err := Ramp(0, stages)
		if err != nil {
			t.Fatalf("%q parsed but Ramp refused it: %v", s, err)
		}
		if tot := p.Total(); math.IsNaN(tot) || tot < 0 {
			t.Fatalf("%q: total %v", s, tot)
		}
	})
}

// A ramp's requests are the area under its rate: 0 to 1000/s over 10 s is
// 5,000; held 5 s at 1000/s, 5,000 more; down to 0 over 2 s, 1,000.
func TestRampCounts(t *testing.T) {
	stages, _ := ParseStages("10s:1000,5s:1000,2s:0")
	p, err := Ramp(0, stages)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Total(); math.Abs(got-11000) > 1e-6 {
		t.Fatalf("total %v, want 11000", got)
	}
	if p.Duration() != 17*time.Second || p.Peak() != 1000 {
		t.Fatalf("duration %v peak %v", p.Duration(), p.Peak())
	}
	for _, tc := range []struct {
		at   time.Duration
		want float64
	}{{0, 0}, {5 * time.Second, 1250}, {10 * time.Second, 5000}, {15 * time.Second, 10000}, {17 * time.Second, 11000}, {time.Hour, 11000}} {
		if got := p.Count(int64(tc.at)); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("Count(%v) = %v, want %v", tc.at, got, tc.want)
		}
	}
	// Time inverts Count to the nanosecond.
	for _, n := range []float64{0.5, 1, 1250, 4999.9, 5000, 7777, 10999} {
		ns := p.Time(n)
		if p.Count(ns) < n || p.Count(ns-1) >= n {
			t.Errorf("Time(%v) = %d: Count there %v, a ns before %v", n, ns, p.Count(ns), p.Count(ns-1))
		}
	}
	if p.Time(11000) != Never {
		t.Error("a request past the ramp's end falls due")
	}
}

func TestEvenConstantSchedule(t *testing.T) {
	// 4 threads at 1000/s: thread 1's requests at 1 ms, 5 ms, 9 ms, ...
	s := NewSchedule(Constant(1000), Even, 0, 4, 1)
	for k, want := range []int64{1e6, 5e6, 9e6, 13e6} {
		if got := s.At(uint64(k)); got != want {
			t.Errorf("At(%d) = %d, want %d", k, got, want)
		}
	}
	if s.Index(5e6) != 1 || s.Index(5e6+1) != 2 || s.Index(0) != 0 {
		t.Errorf("Index: %d %d %d", s.Index(5e6), s.Index(5e6+1), s.Index(0))
	}
}

// Index is exactly the first request due at or after a time, whatever the
// profile and process, and At never goes back.
func TestIndexInvertsAt(t *testing.T) {
	stages, _ := ParseStages("2s:5000,1s:5000,1s:0,1s:3000")
	ramp, _ := Ramp(100, stages)
	r := rand.New(rand.NewPCG(1, 2))
	for _, prof := range []*Profile{Constant(12345), ramp} {
		for _, kind := range []Kind{Even, Poisson} {
			s := NewSchedule(prof, kind, 7, 3, 2)
			prev := int64(-1)
			for k := uint64(0); k < 3000; k++ {
				at := s.At(k)
				if at < prev {
					t.Fatalf("%v: At(%d) = %d before At(%d) = %d", kind, k, at, k-1, prev)
				}
				prev = at
			}
			for range 2000 {
				ns := r.Int64N(int64(6 * time.Second))
				k := s.Index(ns)
				if s.At(k) < ns || k > 0 && s.At(k-1) >= ns {
					t.Fatalf("%v: Index(%d) = %d, At there %d, before %d", kind, ns, k, s.At(k), s.At(k-1))
				}
			}
		}
	}
}

// Poisson arrivals measure as Poisson: the inter-arrival times of all the
// threads together have the rate's mean and a coefficient of variation
// near 1; a seed gives the same schedule, another seed another.
func TestPoissonArrivals(t *testing.T) {
	const rate, threads, perThread = 50000.0, 3, 40000
	var all []int64
	for id := range threads {
		s := NewSchedule(Constant(rate), Poisson, 42, threads, id)
		for k := uint64(0); k < perThread; k++ {
			all = append(all, s.At(k))
		}
	}
	horizon := int64(float64(perThread*threads) / rate * 1e9 * 0.9) // every thread still has points here
	var times []int64
	for _, a := range all {
		if a < horizon {
			times = append(times, a)
		}
	}
	slices.Sort(times)
	var sum, sum2 float64
	for i := 1; i < len(times); i++ {
		d := float64(times[i] - times[i-1])
		sum += d
		sum2 += d * d
	}
	n := float64(len(times) - 1)
	mean := sum / n
	cv := math.Sqrt(sum2/n-mean*mean) / mean
	if want := 1e9 / rate; math.Abs(mean/want-1) > 0.03 {
		t.Errorf("mean inter-arrival %.0f ns, want %.0f", mean, want)
	}
	if math.Abs(cv-1) > 0.05 {
		t.Errorf("coefficient of variation %.3f, want about 1", cv)
	}
	a, b, c := NewSchedule(Constant(rate), Poisson, 42, 1, 0), NewSchedule(Constant(rate), Poisson, 42, 1, 0), NewSchedule(Constant(rate), Poisson, 43, 1, 0)
	same, differ := true, false
	for k := uint64(0); k < 1000; k++ {
		same = same && a.At(k) == b.At(k)
		differ = differ || a.At(k) != c.At(k)
	}
	// Out of order, from marks far apart: the same values.
	want := map[uint64]int64{}
	for _, k := range []uint64{999, 5, 700, 0, 512, 511, 256} {
		want[k] = a.At(k)
	}
	fresh := NewSchedule(Constant(rate), Poisson, 42, 1, 0)
	for _, k := range []uint64{0, 256, 511, 512, 700, 5, 999} {
		same = same && fresh.At(k) == want[k]
	}
	if !same || !differ {
		t.Errorf("seeded schedules: same seed same times %v, other seed other times %v", same, differ)
	}
}

// A ramp with Poisson arrivals follows the ramp: the requests due in each
// second are near the area under the rate there.
func TestPoissonRampFollowsTheRamp(t *testing.T) {
	stages, _ := ParseStages("4s:20000,2s:0")
	prof, _ := Ramp(0, stages)
	counts := make([]int, 6)
	for id := range 2 {
		s := NewSchedule(prof, Poisson, 9, 2, id)
		for k := uint64(0); ; k++ {
			at := s.At(k)
			if at == Never {
				break
			}
			counts[at/1e9]++
		}
	}
	for sec, got := range counts {
		want := prof.Count(int64(sec+1)*1e9) - prof.Count(int64(sec)*1e9)
		if math.Abs(float64(got)-want) > 5*math.Sqrt(want) {
			t.Errorf("second %d: %d requests, want about %.0f", sec, got, want)
		}
	}
}

func BenchmarkScheduleNext(b *testing.B) {
	stages, _ := ParseStages("1h:50000")
	prof, _ := Ramp(0, stages)
	for _, kind := range []Kind{Even, Poisson} {
		b.Run(kind.String(), func(b *testing.B) {
			s := NewSchedule(prof, kind, 1, 2, 0)
			b.ReportAllocs()
			var k uint64
			for b.Loop() {
				_ = s.At(k)
				_ = s.At(k + 8) // the pacer's look-ahead
				k++
			}
		})
	}
}

func BenchmarkConstantNext(b *testing.B) {
	s := NewSchedule(Constant(50000), Even, 1, 2, 0)
	b.ReportAllocs()
	var k uint64
	for b.Loop() {
		_ = s.At(k)
		_ = s.At(k + 8)
		k++
	}
}
