package reports

import (
	"cmp"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"weaseldb/artifacts"
	"weaseldb/internal/stats"
)

// runModel recomputes a run's derived figures from its artifacts, decoded
// generically, without the generator's code: the check that every derived
// number of the report is what its definition (docs/report.md) says.
type runModel struct {
	setups                      []setupModel
	perIterTimed, perIterTarget float64
	timedNs, targetIters        []float64
}

type setupModel struct {
	title    string
	rps      float64   // median over the rounds the figures use
	roundRps []float64 // every round the figures use
	work     float64   // CPU work per request
	median   modelRound
	okIters  float64
	timedFor float64 // the iterations timed
}

type modelRound struct {
	rps, coreFraction, machineBusy, clientCores float64
}

func num(t *testing.T, doc any, path string) float64 {
	t.Helper()
	v, err := LookupNumber(doc, path)
	if err != nil {
		t.Fatalf("model: %v", err)
	}
	return v
}

func readGeneric(t *testing.T, dir, name string) any {
	t.Helper()
	var doc any
	readArtifact(t, dir, name, &doc)
	return doc
}

// readable decodes an artifact if it exists and is JSON: the model's own
// rule for what a damaged artifact costs (its round, or its calibration).
func readable(dir, name string) (any, bool) {
	if name == "" {
		return nil, false
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, false
	}
	var doc any
	if json.Unmarshal(data, &doc) != nil {
		return nil, false
	}
	return doc, true
}

func newRunModel(t *testing.T, dir string) *runModel {
	t.Helper()
	m := &runModel{}
	type roundFiles struct{ load, loaded, prefix, hlog string }
	type setupFiles struct {
		title   string
		okIters float64
		rounds  []roundFiles
	}
	var setups []setupFiles
	var cals [][2]string // timed, target
	if _, err := os.Stat(filepath.Join(dir, artifacts.SetupsFile)); err == nil {
		ss := readGeneric(t, dir, artifacts.SetupsFile).(map[string]any)
		for _, s := range ss["setups"].([]any) {
			s := s.(map[string]any)
			sf := setupFiles{title: s["title"].(string), okIters: s["ok_resolve_iterations"].(float64)}
			for _, r := range ss["runs"].([]any) {
				r := r.(map[string]any)
				if r["setup"] == s["name"] && r["status"] == artifacts.StatusMeasured {
					hlog, _ := r["hdr_log"].(string)
					sf.rounds = append(sf.rounds, roundFiles{r["load"].(string), r["sample"].(string), "loaded.", hlog})
				}
			}
			setups = append(setups, sf)
		}
		for _, c := range ss["calibrations"].([]any) {
			c := c.(map[string]any)
			timed, _ := c["timed"].(string)
			target, _ := c["target"].(string)
			cals = append(cals, [2]string{timed, target})
		}
	} else {
		ok := 0.0
		if v, err := LookupNumber(readGeneric(t, dir, artifacts.ManifestFile), "config.values.benchmark.ok_resolve_iterations"); err == nil {
			ok = v
		}
		sf := setupFiles{title: "this run", okIters: ok, rounds: []roundFiles{{artifacts.LoadFile, artifacts.ServerCPULoaded, "", ""}}}
		if _, ok := readable(dir, artifacts.ServerCPULoaded); !ok {
			sf.rounds[0].loaded = ""
		}
		setups = append(setups, sf)
		cals = append(cals, [2]string{artifacts.CPUWorkFile, artifacts.CPUWorkTargetFile})
	}
	var perTimed, perTarget []float64
	timedIters := 0.0
	for _, c := range cals {
		if doc, ok := readable(dir, c[0]); ok {
			timedIters = num(t, doc, "iterations")
			m.timedNs = append(m.timedNs, num(t, doc, "ns_per_call_median"))
			perTimed = append(perTimed, num(t, doc, "ns_per_call_median")/timedIters)
		}
		if doc, ok := readable(dir, c[1]); ok {
			m.targetIters = append(m.targetIters, num(t, doc, "iterations"))
			perTarget = append(perTarget, num(t, doc, "ns_per_call_median")/num(t, doc, "iterations"))
		}
	}
	if len(perTimed) > 0 && len(perTarget) > 0 {
		m.perIterTimed, m.perIterTarget = stats.Median(perTimed), stats.Median(perTarget)
	}
	for _, sf := range setups {
		sm := setupModel{title: sf.title, okIters: sf.okIters, timedFor: timedIters}
		var all, clean []modelRound
		for _, rf := range sf.rounds {
			load, ok := readable(dir, rf.load)
			if !ok {
				continue // a round whose load result is damaged is left out
			}
			sample, sampleOK := readable(dir, rf.loaded)
			if rf.prefix != "" && !sampleOK {
				continue // so is one whose sample is
			}
			if rf.hlog != "" {
				if _, err := ReadHdrLog(filepath.Join(dir, rf.hlog)); err != nil {
					continue // or whose HDR log is
				}
			}
			r := modelRound{rps: num(t, load, "requests_per_sec"), clientCores: num(t, load, "client_cpu_cores")}
			if rf.loaded != "" {
				r.coreFraction = num(t, sample, rf.prefix+"core_fraction")
				r.machineBusy = num(t, sample, rf.prefix+"machine_busy_cores")
			}
			all = append(all, r)
			// A version 1 result has no accounting: clean by default.
			unfinished, _ := LookupNumber(load, "unfinished")
			dropped, _ := LookupNumber(load, "dropped")
			if unfinished == 0 && dropped == 0 {
				clean = append(clean, r)
			}
		}
		used := clean
		if len(used) == 0 {
			used = all
		}
		if len(used) > 0 {
			slices.SortStableFunc(used, func(a, b modelRound) int { return cmp.Compare(a.rps, b.rps) })
			rps := make([]float64, len(used))
			for i, r := range used {
				rps[i] = r.rps
			}
			sm.rps, sm.median, sm.roundRps = stats.Median(rps), used[(len(used)-1)/2], rps
		}
		if len(m.timedNs) > 0 {
			sm.work = stats.Median(m.timedNs)
			if sm.okIters > 0 && sm.okIters != timedIters {
				sm.work = sm.work / timedIters * sm.okIters
			}
		}
		m.setups = append(m.setups, sm)
	}
	return m
}

// derived recomputes the derived figure called name.
func (m *runModel) derived(t *testing.T, name string) float64 {
	t.Helper()
	switch {
	case name == "Calibration against the timed run, difference per iteration":
		return abs(m.perIterTimed-m.perIterTarget) / max(m.perIterTimed, m.perIterTarget) * 100
	case name == "Cost per iteration, timed runs (median)":
		return m.perIterTimed
	case name == "Cost per iteration, calibrations (median)":
		return m.perIterTarget
	case strings.HasPrefix(name, "CPU work of ") && strings.Contains(name, ", median of "):
		return stats.Median(m.timedNs)
	case strings.HasPrefix(name, "Iterations calibrated for the target, median of "):
		return stats.Median(m.targetIters)
	case strings.HasPrefix(name, "CPU work per /ok request (scaled to"):
		return m.setups[0].work
	}
	for _, s := range m.setups {
		what, ok := strings.CutPrefix(name, s.title+": ")
		if !ok {
			continue
		}
		perReq := s.median.coreFraction * 1e9 / s.median.rps
		switch {
		case what == "CPU work efficiency":
			return s.work * s.rps / 1e9 * 100
		case what == "theoretical maximum CPU time per request":
			return 1e9 / s.rps
		case what == "server CPU per request, median round":
			return perReq
		case what == "throughput relative to the seed":
			return s.rps / SeedRequestsPerSec * 100
		case what == "share of server CPU spent on the configured work":
			return s.work / perReq * 100
		case what == "server and load tester CPU together, median round":
			return s.median.coreFraction + s.median.clientCores
		case what == "other processes' CPU, median round":
			return s.median.machineBusy - s.median.coreFraction - s.median.clientCores
		case strings.HasPrefix(what, "throughput, median of "):
			return s.rps
		case strings.HasPrefix(what, "throughput, another run's median of ") && strings.HasSuffix(what, ", low end"):
			return s.rps - repeatHalfWidth(t, s.roundRps)
		case strings.HasPrefix(what, "throughput, another run's median of ") && strings.HasSuffix(what, ", high end"):
			return s.rps + repeatHalfWidth(t, s.roundRps)
		}
	}
	t.Fatalf("derived figure %q has no independent check", name)
	return 0
}

// repeatHalfWidth is the half width of the 95% interval for another run's
// median, from a table of Student's t quantiles (not the library the report
// uses).
func repeatHalfWidth(t *testing.T, xs []float64) float64 {
	t.Helper()
	t975 := map[int]float64{2: 4.302653, 3: 3.182446, 4: 2.776445, 5: 2.570582, 6: 2.446912, 7: 2.364624, 8: 2.306004, 9: 2.262157}
	q, ok := t975[len(xs)-1]
	if !ok {
		t.Fatalf("no t quantile for %d rounds", len(xs))
	}
	var mean, ss float64
	for _, x := range xs {
		mean += x / float64(len(xs))
	}
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(len(xs)-1))
	return q * math.Sqrt(math.Pi/2) * sd * math.Sqrt(2/float64(len(xs)))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
