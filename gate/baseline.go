package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"weaseldb/gate/result"
	"weaseldb/gate/stats"
	"weaseldb/gate/verdict"
	"weaseldb/internal/jsonfile"
	istats "weaseldb/internal/stats"
)

// BaselineVersion is the schema version of testdata/baseline.json.
const BaselineVersion = 1

// Baseline is a recorded measurement to compare later runs with.
type Baseline struct {
	Version    int             `json:"version"`
	Created    time.Time       `json:"created"`
	Command    string          `json:"command"`
	Binary     string          `json:"binary"`
	Machine    result.Machine  `json:"machine"`
	Settings   result.Settings `json:"settings"`
	SamplesRPS []float64       `json:"samples_rps"`
	MedianRPS  float64         `json:"median_rps"`
	Spread     float64         `json:"spread"` // median absolute deviation / median
}

// ReadBaseline loads and checks a baseline file.
func ReadBaseline(path string) (Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Baseline{}, fmt.Errorf("reading baseline: %w", err)
	}
	var b Baseline
	if err := json.Unmarshal(data, &b); err != nil {
		return Baseline{}, fmt.Errorf("baseline %s: %w", path, err)
	}
	if b.Version != BaselineVersion {
		return Baseline{}, fmt.Errorf("baseline %s: version %d, want %d (rewrite it with --update-baseline)", path, b.Version, BaselineVersion)
	}
	if len(b.SamplesRPS) == 0 {
		return Baseline{}, errors.New("baseline " + path + ": no samples (rewrite it with --update-baseline)")
	}
	for _, s := range b.SamplesRPS {
		if !(s > 0) {
			return Baseline{}, fmt.Errorf("baseline %s: sample %v is not a positive req/s", path, s)
		}
	}
	return b, nil
}

// WriteBaseline writes b atomically (a temporary file renamed over path),
// so a gate interrupted mid-write never leaves half a baseline.
func WriteBaseline(path string, b Baseline) error {
	b.Version = BaselineVersion
	b.MedianRPS = istats.Median(b.SamplesRPS)
	b.Spread = stats.RelativeSpread(b.SamplesRPS)
	if err := jsonfile.WriteFileAtomic(path, b); err != nil {
		return fmt.Errorf("writing baseline: %w", err)
	}
	return nil
}

// loadBaseline reads the baseline and checks that it is comparable; nil
// means a problem was recorded.
func (m *measurement) loadBaseline(settings result.Settings, machine result.Machine) *Baseline {
	sc := m.scenarios[0]
	b, err := ReadBaseline(m.o.BaselineFile)
	if err != nil {
		m.fail(sc, verdict.ReasonBadInput, "%v", err)
		return nil
	}
	m.baselineFile = m.o.BaselineFile
	different, warnings := b.Machine.Compare(machine)
	sc.r.Warnings = append(sc.r.Warnings, warnings...)
	if len(different) > 0 {
		msg := "baseline is from another machine: " + strings.Join(different, "; ")
		if !m.o.AllowOtherMachine {
			m.fail(sc, verdict.ReasonOtherMachine, "%s (--allow-other-machine to compare anyway)", msg)
			return nil
		}
		sc.r.Warnings = append(sc.r.Warnings, msg)
	}
	if diff := b.Settings.Differences(settings); len(diff) > 0 {
		m.fail(sc, verdict.ReasonOtherSettings, "baseline was measured with other settings: %s", strings.Join(diff, "; "))
		return nil
	}
	return &b
}

func (m *measurement) writeBaseline(sc *scenarioRun, settings result.Settings, machine result.Machine) {
	r := sc.r
	for _, p := range r.Problems {
		if !(m.o.NoiseOK && verdict.IsNoise(p.Code)) {
			r.Decision = verdict.Decision{Verdict: verdict.CouldNotJudge, ReasonCode: p.Code, Reason: "baseline not written: " + p.Detail}
			return
		}
	}
	b := Baseline{Created: m.now().UTC().Truncate(time.Second), Command: m.o.Command, Binary: m.o.B,
		Machine: machine, Settings: settings, SamplesRPS: r.B.SamplesRPS}
	if err := WriteBaseline(m.o.BaselineFile, b); err != nil {
		r.Decision = verdict.Decision{Verdict: verdict.CouldNotJudge, ReasonCode: verdict.ReasonBadInput, Reason: err.Error()}
		return
	}
	m.baselineFile = m.o.BaselineFile
	r.Decision = verdict.Decision{Verdict: verdict.Pass, ReasonCode: "baseline_written",
		Reason: fmt.Sprintf("baseline written to %s: median %s req/s over %d runs (±%.1f%%)",
			m.o.BaselineFile, result.FormatSample(result.MetricRPS, r.B.MedianRPS), len(r.B.SamplesRPS), r.B.Spread*100)}
}
