package reports

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"weaseldb/loadtester/result"
)

// writeRateCurve writes a curve of steps at rates (p99 100 µs up to knee,
// 5 ms past it) and, when search is set, a knee document, into dir.
func writeRateCurve(t *testing.T, dir string, rates []float64, knee float64, search *result.Search) {
	t.Helper()
	objs, err := result.ParseObjectives("p99=1ms")
	if err != nil {
		t.Fatal(err)
	}
	doc := func(rates []float64) *result.StepsResult {
		sr := &result.StepsResult{Kind: result.StepsKind, Version: result.StepsVersion, Target: "http://unix/ok",
			Objectives: objs, Config: map[string]any{"concurrency": 100.0, "network_threads": 1.0, "requests_per_conn": 500.0}}
		for i, r := range rates {
			p99 := int64(100_000)
			if r > knee {
				p99 = 5_000_000
			}
			pass := r <= knee
			st := result.Step{N: i + 1, RateAsked: r, RateAchieved: r * 0.999, Due: int64(r * 2), Answered: int64(r * 2),
				Latency:        result.Latency{P50: p99 / 3, P90: p99 / 2, P99: p99, P999: 2 * p99, Max: 3 * p99},
				ServiceLatency: result.Latency{P50: p99 / 4, P99: p99 / 2}, Pass: &pass}
			if !pass {
				st.FailReasons = []string{"p99 5.00ms > 1.00ms"}
			}
			sr.Steps = append(sr.Steps, st)
		}
		return sr
	}
	write := func(name string, sr *result.StepsResult) {
		var buf bytes.Buffer
		if err := result.WriteSteps(&buf, sr); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(RateCurveFile, doc(rates))
	if search != nil {
		k := doc([]float64{search.LastPass, search.FirstFail})
		k.Search = search
		write(KneeFile, k)
	}
}

// The section draws the curve, lists a row per step, and prints the knee
// with its bracket, each figure traced to its artifact's field; the PNG has
// the standard plot size.
func TestRateCurveSection(t *testing.T) {
	dir := t.TempDir()
	writeRateCurve(t, dir, []float64{10_000, 25_000, 50_000, 70_000, 85_000, 100_000}, 60_000,
		&result.Search{Rate: 62_000, LastPass: 62_000, FirstFail: 66_000, Confirmed: true, Elapsed: 31,
			Trials: make([]result.Trial, 9), Spec: result.SearchRecord{Repeats: 3}, Stopped: result.StopConverged})
	w := &writer{run: &Run{Dir: dir}, imgDir: dir, imgRel: "img"}
	if err := w.rateCurveSection(); err != nil {
		t.Fatal(err)
	}
	md := w.out.String()
	for _, want := range []string{"![Latency against throughput", "(img/rate_curve.png)", "| 100,000 | 99,900 |",
		"no: p99 5.00ms > 1.00ms", "62,000 req/s<sup>[1]</sup>", "66,000 req/s<sup>[2]</sup>", "majority of 3 runs", "9 steps"} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
	for _, f := range w.book.list {
		var doc any
		data, err := os.ReadFile(filepath.Join(dir, f.Artifact))
		if err != nil {
			t.Fatalf("figure %q names %s: %v", f.Name, f.Artifact, err)
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		v, err := LookupNumber(doc, f.Field)
		if err != nil || v*f.Scale != f.Value {
			t.Errorf("figure %q = %g, %s %s gives %g (%v)", f.Name, f.Value, f.Artifact, f.Field, v, err)
		}
	}
	file, err := os.Open(filepath.Join(dir, RateCurvePNG))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	cfg, err := png.DecodeConfig(file)
	if wantW, wantH := PlotPixels(false); err != nil || cfg.Width != wantW || cfg.Height != wantH {
		t.Errorf("PNG %dx%d (%v), want %dx%d", cfg.Width, cfg.Height, err, wantW, wantH)
	}
}

// Without the curve the section says it was not measured; without the
// knee, the curve stands alone; a search that found nothing says so.
func TestRateCurveSectionPartial(t *testing.T) {
	tests := []struct {
		name   string
		curve  bool
		search *result.Search
		want   string
	}{
		{"nothing", false, nil, "_Not measured: no rate_curve.json"},
		{"no knee", true, nil, "_not measured (no knee.json)_"},
		{"no rate met it", true, &result.Search{FirstFail: 1000, Certainty: "the lowest tried missed it"}, "**No rate met p99 ≤ 1ms**"},
		{"unconfirmed", true, &result.Search{Rate: 5000, LastPass: 5000, FirstFail: 7000, Stopped: result.StopSteps}, "**not confirmed** (step budget"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.curve {
				writeRateCurve(t, dir, []float64{1000, 2000}, 1500, tt.search)
			}
			w := &writer{run: &Run{Dir: dir}, imgDir: dir, imgRel: "img"}
			if err := w.rateCurveSection(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(w.out.String(), tt.want) {
				t.Errorf("section lacks %q:\n%s", tt.want, w.out.String())
			}
		})
	}
}
