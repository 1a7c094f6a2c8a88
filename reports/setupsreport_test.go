package reports

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/internal/numfmt"
	"weaseldb/loadtester/result"
)

// The Summary of a run of setups leads with both, side by side: throughput
// with its spread, what bounded each, the efficiency next to the seed's
// 61%, and the calibration's spread.
func TestSummaryLeadsWithBothSetups(t *testing.T) {
	md, _ := render(t, setupsRun)
	sum := section(t, md, "## Summary")
	for _, want := range []string{
		"| | the seed's setup | fitted setup |",
		"| throughput | **",
		"(median of 3 rounds; ",
		"| what bounded it | **the cores**",
		"| CPU work efficiency (the seed: 61 %<sup>",
		"8 I/O threads, 1 release thread, WaitIfUpstreamIdle; load tester: 2,000 connections in all, over 10 network threads and 2 connect threads; shared cores",
		"1 I/O thread, 1 release thread, WaitIfStageEmpty; load tester: 100 connections in all, over 1 network thread and 2 connect threads; shared cores",
		"fewer than 7: shared cores",
		"4000 iterations of spin work cost **",
		"the seed's 740 ns took **",
		"| rounds | 3 of 3 measured, 3 clean | 3 of 3 measured, 3 clean |",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("Summary lacks %q:\n%s", want, sum)
		}
	}
	if strings.Contains(sum, "not a clean sample") || strings.Contains(sum, "disagree") {
		t.Errorf("a clean, consistent run is flagged:\n%s", sum)
	}
}

// A round with unfinished or dropped requests is flagged in the Summary and
// the rounds table, and left out of the setup's figures.
func TestUncleanRoundIsFlaggedAndLeftOut(t *testing.T) {
	dir := copyRun(t, setupsRun)
	// The fitted setup's fastest round stalled at the end: 500 requests never answered.
	editJSON(t, dir, "rounds/fitted-r1.load.json", func(doc map[string]any) {
		doc["unfinished"], doc["dropped"] = 400.0, 100.0
		doc["due"] = doc["due"].(float64) + 500
	})
	md, _ := render(t, dir)
	sum := section(t, md, "## Summary")
	if !strings.Contains(sum, "**Fitted setup, round 1 is not a clean sample** and is left out of the figures above") {
		t.Errorf("Summary does not flag the round:\n%s", sum)
	}
	if !strings.Contains(sum, "| rounds | 3 of 3 measured, 3 clean | **3 of 3 measured, 2 clean** |") || !strings.Contains(sum, "(median of 2 rounds; ") {
		t.Errorf("the unclean round is still counted:\n%s", sum)
	}
	rounds := section(t, md, "## Rounds")
	if !strings.Contains(rounds, "| 1.2 | fitted | ") || !strings.Contains(rounds, "**not clean**: due ") {
		t.Errorf("rounds table does not flag it:\n%s", rounds)
	}
	checkTraces(t, dir, md)
}

// When no round of a setup is clean, its figures are shown, flagged.
func TestNoCleanRound(t *testing.T) {
	dir := copyRun(t, setupsRun)
	for _, r := range []string{"1", "2", "3"} {
		editJSON(t, dir, "rounds/seed-r"+r+".load.json", func(doc map[string]any) { doc["dropped"] = 7.0 })
	}
	md, _ := render(t, dir)
	sum := section(t, md, "## Summary")
	if !strings.Contains(sum, "**not a clean sample**: no round answered every due request") ||
		!strings.Contains(sum, "(no round of this setup was: the figures above use them all, flagged)") {
		t.Errorf("Summary does not flag the setup:\n%s", sum)
	}
	checkTraces(t, dir, md)
}

// When the calibration's cost per iteration is more than 10% from the timed
// run's, the Summary says so; a calibration whose passes never agreed too.
func TestCalibrationDisagreementInSummary(t *testing.T) {
	dir := copyRun(t, setupsRun)
	for _, r := range []string{"1", "2", "3"} {
		// The timed runs measured 20% slower than the calibrations.
		editJSON(t, dir, "rounds/r"+r+".cpu_work.json", func(doc map[string]any) {
			doc["ns_per_call_median"] = doc["ns_per_call_median"].(float64) * 1.2
		})
	}
	editJSON(t, dir, "rounds/r2.cpu_work_target.json", func(doc map[string]any) { doc["target_agreed"] = false })
	md, _ := render(t, dir)
	sum := section(t, md, "## Summary")
	for _, want := range []string{"**The calibration and the timed run disagree by ", "**The calibration did not settle in round(s) 2**"} {
		if !strings.Contains(sum, want) {
			t.Errorf("Summary lacks %q:\n%s", want, sum)
		}
	}
	if cal := section(t, md, "## Calibration"); !strings.Contains(cal, "**none agreed**") {
		t.Errorf("calibration table does not flag round 2:\n%s", cal)
	}
	checkTraces(t, dir, md)
}

// A failed run and a failed calibration are named in the Summary and the tables.
func TestFailedRunIsShown(t *testing.T) {
	dir := copyRun(t, setupsRun, "rounds/seed-r3.load.json", "rounds/seed-r3.sample.json")
	editJSON(t, dir, artifacts.SetupsFile, func(doc map[string]any) {
		for _, r := range doc["runs"].([]any) {
			if r := r.(map[string]any); r["setup"] == "seed" && r["round"] == 3.0 {
				r["status"], r["reason"] = artifacts.StatusFailed, "weaseldb exited with status 1 before it was ready"
				delete(r, "load")
				delete(r, "sample")
				delete(r, "hdr_log")
			}
		}
		cal := doc["calibrations"].([]any)[0].(map[string]any)
		cal["status"], cal["reason"] = artifacts.StatusFailed, "bench_cpu_work: exit status 1"
	})
	md, _ := render(t, dir)
	sum := section(t, md, "## Summary")
	for _, want := range []string{"**The seed's setup, round 3 was not measured** (failed): weaseldb exited", "**The calibration of round 1 failed**",
		"**2 of 3 measured, 2 clean**", "(median of 2 rounds; "} {
		if !strings.Contains(sum, want) {
			t.Errorf("Summary lacks %q:\n%s", want, sum)
		}
	}
	if !strings.Contains(section(t, md, "## Rounds"), "| seed | **failed**: weaseldb exited") {
		t.Error("rounds table does not show the failed run")
	}
	checkTraces(t, dir, md)
}

// A merged result (load_tester merge) renders wherever a single one does:
// the instances are listed and the Summary says it is merged.
func TestMergedResultRendered(t *testing.T) {
	for _, tc := range []struct{ src, load string }{{setupsRun, "rounds/fitted-r3.load.json"}, {recordedRun, artifacts.LoadFile}} {
		dir := copyRun(t, tc.src)
		editJSON(t, dir, tc.load, func(doc map[string]any) {
			doc["instance"] = "merged"
			doc["instances"] = []any{
				map[string]any{"name": "pod-0", "window_start": "2026-12-01T10:00:00Z", "requests_per_sec": 1000.0, "due": 5000.0},
				map[string]any{"name": "pod-1", "window_start": "2026-12-01T10:00:00Z", "requests_per_sec": 1100.0, "due": 5500.0},
			}
		})
		md, _ := render(t, dir)
		if !strings.Contains(section(t, md, "## Summary"), "(merged from 2 load_tester instances)") {
			t.Errorf("%s: Summary does not say the result is merged", tc.src)
		}
		if !strings.Contains(md, "This result merges 2 load_tester instances") || !strings.Contains(md, "| pod-1 | 2026-12-01T10:00:00Z | 1,100 | 5,500 |") {
			t.Errorf("%s: no instance table", tc.src)
		}
		checkTraces(t, dir, md)
	}
}

// Every row of the rounds table prints its artifacts' fields.
func TestRoundsTableMatchesArtifacts(t *testing.T) {
	md, _ := render(t, setupsRun)
	rowRE := regexp.MustCompile("^\\| (\\d+)\\.(\\d) \\| (\\w+) \\| ([0-9,]+) \\| ([0-9.,]+) \\| ([0-9.]+) \\| ([0-9.]+) \\| ([0-9]+) \\| ([0-9]+) \\| due ([0-9,]+) = .* \\| `(rounds/[^`]+)`, `(rounds/[^`]+)` \\|$")
	rows := matchingLines(section(t, md, "## Rounds"), rowRE)
	if len(rows) != 6 {
		t.Fatalf("%d rounds rows, want 6", len(rows))
	}
	for _, m := range rows {
		var load result.Result
		var sample artifacts.ServerSample
		readArtifact(t, setupsRun, m[11], &load)
		readArtifact(t, setupsRun, m[12], &sample)
		want := []float64{load.RequestsPerSec, float64(load.Latency.P99) / 1e3, sample.Loaded.CoreFraction, sample.Loaded.MachineBusyCores,
			sample.StageBusy["resolve"] * 100, load.ClientCPUFraction * 100, float64(load.Due)}
		for j, w := range want {
			got, dec, err := numfmt.Parse(m[4+j])
			if err != nil {
				t.Fatal(err)
			}
			if !closeTo(got, dec, w) {
				t.Errorf("%s column %d: report %s, artifact %v", m[11], j, m[4+j], w)
			}
		}
		if round, _ := strconv.Atoi(m[1]); !strings.Contains(m[11], m[3]+"-r"+m[1]) || round < 1 {
			t.Errorf("row %s.%s %s names %s", m[1], m[2], m[3], m[11])
		}
	}
	// The first of each round alternates: the seed's first in odd rounds.
	for _, want := range []string{"| 1.1 | seed |", "| 2.1 | fitted |", "| 3.1 | seed |"} {
		if !strings.Contains(md, want) {
			t.Errorf("rounds do not alternate: no %q", want)
		}
	}
}

// A rate-mode result prints the service time beside the corrected latency.
func TestServiceTimeBesideLatency(t *testing.T) {
	dir := copyRun(t, setupsRun)
	editJSON(t, dir, "rounds/fitted-r3.load.json", func(doc map[string]any) {
		doc["service_latency_ns"] = map[string]any{"p50": 90000.0, "p90": 150000.0, "p99": 300000.0, "p999": 500000.0, "max": 900000.0}
		doc["service_histogram"] = doc["histogram"] // any valid V2 histogram will do
	})
	md, _ := render(t, dir)
	if !strings.Contains(md, "| percentile | latency, from the intended send | service time, from the actual send |") ||
		!strings.Contains(md, " | 90.0 µs<sup>") {
		t.Errorf("no service time column:\n%s", section(t, md, "## Performance Metrics"))
	}
	checkTraces(t, dir, md)
}
