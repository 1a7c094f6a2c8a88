package runview

import (
	"encoding/json"
	"fmt"
	"strings"

	"weaseldb/internal/numfmt"
	"weaseldb/loadtester/result"
)

// The page's sections that mirror the text summary's (PrintSummary and the
// verdict line): per stage, per check, connections, thresholds in their own
// units, the verdict. Each section carries data-section, each stage row
// data-stage and each check row data-check, so a test can hold the page
// against the text.

// stageRow is a stage's line of the per-stage table.
type stageRow struct {
	result.StageResult
	Span, Target, RPS string
	Lat               latencyRow
	Failed            *latencyRow // the stage's failed requests that got a response (nil: none)
}

// checkRow is a check's line: its passes and failures over the responses.
type checkRow struct {
	result.CheckResult
	Kinds, PassedPct string
}

// connView is the summary's connections line.
type connView struct {
	OpenAtEnd, Opened, Backoffs int64
	BackoffS, BackoffMaxS       string
}

// verdictView is the verdict line the run printed (at the result's
// --max-errors), and whether it passed.
type verdictView struct {
	Text string
	Pass bool
}

func stageRows(stages []result.StageResult) []stageRow {
	rows := make([]stageRow, 0, len(stages))
	for _, s := range stages {
		r := stageRow{StageResult: s, Span: fmt.Sprintf("%s–%s s", numfmt.Format(s.StartS, 3), numfmt.Format(s.EndS, 3)),
			Target: fmt.Sprintf("%s→%s", numfmt.Format(s.From, 1), numfmt.Format(s.To, 1)), RPS: numfmt.Format(s.RequestsPerSec, 0),
			Lat: latencyRowOf("", s.Latency)}
		if f := s.FailedLatency; f != nil {
			l := latencyRowOf("", *f)
			r.Failed = &l
		}
		rows = append(rows, r)
	}
	return rows
}

func checkRows(checks []result.CheckResult) []checkRow {
	rows := make([]checkRow, 0, len(checks))
	for _, c := range checks {
		pct := 0.0
		if n := c.Passed + c.Failed; n > 0 {
			pct = 100 * float64(c.Passed) / float64(n)
		}
		kinds := "every kind"
		if len(c.Kinds) > 0 {
			kinds = strings.Join(c.Kinds, ", ")
		}
		rows = append(rows, checkRow{CheckResult: c, Kinds: kinds, PassedPct: numfmt.Format(pct, 2) + "%"})
	}
	return rows
}

func connOf(res *result.Result) connView {
	v := connView{Opened: res.ConnectionsOpened, Backoffs: res.ReconnectBackoffs,
		BackoffS: numfmt.Format(res.ReconnectBackoffS, 3), BackoffMaxS: numfmt.Format(res.ReconnectBackoffMaxS, 3)}
	if n := len(res.Intervals); n > 0 {
		v.OpenAtEnd = int64(res.Intervals[n-1].OpenConnections)
	}
	return v
}

// verdictOf is the verdict line the run printed: judged at the
// --max-errors its config records (0 when it records none).
func verdictOf(res *result.Result) verdictView {
	var cfg struct {
		MaxErrors int64 `json:"max_errors"`
	}
	if b, err := json.Marshal(res.Config); err == nil {
		json.Unmarshal(b, &cfg) //nolint:errcheck // a config without it is judged at 0, the flag's default
	}
	outcome, text, _ := result.Verdict(res, cfg.MaxErrors)
	return verdictView{Text: text, Pass: outcome == result.OutcomePass}
}

// thresholdRowsOf is each judged threshold, measured in its own unit.
func thresholdRowsOf(ts []result.ThresholdResult) []thresholdRow {
	rows := make([]thresholdRow, 0, len(ts))
	for _, t := range ts {
		rows = append(rows, thresholdRow{Expr: t.Expr, Measured: t.MeasuredText(), Pass: t.Pass, Reason: t.Reason})
	}
	return rows
}
