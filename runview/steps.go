package runview

import (
	"fmt"
	"html/template"
	"strings"

	"weaseldb/internal/numfmt"
	"weaseldb/loadtester/result"
)

// stepsView is what the page shows of a rate-steps run or a knee search:
// the steps' table, their throughput–latency curve with the knee, the
// search's answer, and each step's own run.
type stepsView struct {
	Target      string
	Objectives  string
	Interrupted bool
	Rows        []stepRow
	Curve       template.HTML
	Search      *searchView
	Warnings    []string
	Config      string
	Command     string
	Runs        []*runView // each step's run, in order (nil where a step has none)
	// HasVerdict and HasThresholds: some step was judged against an
	// objective, some against thresholds; the table has a column for each
	// only then (an empty column would push the others off a screen).
	HasVerdict, HasThresholds bool
}

// stepRow is one step's line.
type stepRow struct {
	result.Step
	Asked, Achieved, P50, P99, P999, SvcP50, SvcP99 string
	Verdict                                         string
	Thresholds                                      []thresholdRow
}

// searchView is a knee search's answer.
type searchView struct {
	Rate, LastPass, FirstFail, Resolution string
	Confirmed                             bool
	Certainty, Stopped                    string
	Trials                                int
}

// newStepsView builds the view of sr.
func newStepsView(sr *result.StepsResult) (*stepsView, error) {
	if len(sr.Steps) == 0 {
		return nil, fmt.Errorf("no step ran: %w", ErrEmpty)
	}
	v := &stepsView{Target: sr.Target, Interrupted: sr.Interrupted, Warnings: sr.Warnings}
	objs := make([]string, len(sr.Objectives))
	for i, o := range sr.Objectives {
		objs[i] = o.String()
	}
	v.Objectives = strings.Join(objs, ", ")
	v.Config, v.Command = configOf(sr.Config)
	if r := sr.Steps[0].Result; r != nil && r.Command != "" {
		v.Command = r.Command // every step ran by one command
	}
	for _, st := range sr.Steps {
		row := stepRowOf(st)
		v.Rows = append(v.Rows, row)
		v.HasVerdict = v.HasVerdict || row.Verdict != ""
		v.HasThresholds = v.HasThresholds || len(row.Thresholds) > 0
		var rv *runView
		if st.Result != nil {
			var err error
			if rv, err = newRunView(fmt.Sprintf("step%d-", st.N), st.Result); err != nil {
				return nil, fmt.Errorf("step %d: %w", st.N, err)
			}
			rv.Command = "" // the steps' command, shown once above them
		}
		v.Runs = append(v.Runs, rv)
	}
	if s := sr.Search; s != nil {
		v.Search = &searchView{Rate: rateString(s.Rate), LastPass: rateString(s.LastPass), FirstFail: rateString(s.FirstFail),
			Resolution: numfmt.Format(100*s.Resolution, 1) + "%", Confirmed: s.Confirmed, Certainty: s.Certainty,
			Stopped: s.Stopped, Trials: len(s.Trials)}
	}
	v.Curve = curveChart(sr).SVG()
	return v, nil
}

func rateString(r float64) string {
	if r == 0 {
		return "none"
	}
	return numfmt.Format(r, 0) + "/s"
}

func stepRowOf(st result.Step) stepRow {
	l, s := st.Latency, st.ServiceLatency
	r := stepRow{Step: st, Asked: numfmt.Format(st.RateAsked, 0), Achieved: numfmt.Format(st.RateAchieved, 0),
		P50: numfmt.Latency(l.P50), P99: numfmt.Latency(l.P99), P999: numfmt.Latency(l.P999),
		SvcP50: numfmt.Latency(s.P50), SvcP99: numfmt.Latency(s.P99)}
	if st.Pass != nil {
		r.Verdict = "pass"
		if !*st.Pass {
			r.Verdict = "FAIL: " + strings.Join(st.FailReasons, "; ")
		}
	}
	if st.Result != nil {
		r.Thresholds = thresholdRowsOf(st.Result.Thresholds)
	}
	return r
}

// curveChart is the steps' throughput–latency curve: each step's corrected
// p50, p99 and p99.9 and its service p99 against the rate it achieved,
// the knee marked where the steps have one.
func curveChart(sr *result.StepsResult) Chart {
	p50, p99, p999, svc := Series{Name: "p50"}, Series{Name: "p99"}, Series{Name: "p99.9"}, Series{Name: "service p99"}
	for _, st := range sr.Steps {
		x := st.RateAchieved
		p50.Points = append(p50.Points, Point{x, float64(st.Latency.P50)})
		p99.Points = append(p99.Points, Point{x, float64(st.Latency.P99)})
		p999.Points = append(p999.Points, Point{x, float64(st.Latency.P999)})
		svc.Points = append(svc.Points, Point{x, float64(st.ServiceLatency.P99)})
	}
	sortSeries(&p50, &p99, &p999, &svc)
	c := Chart{ID: "steps-curve", Title: "Throughput–latency curve (corrected latency; service p99)",
		X: Axis{Label: "rate achieved (req/s)", Format: fmtCount},
		Y: Axis{Label: "latency (log)", Log: true, Format: fmtLatency}, Series: []Series{p50, p99, p999, svc}}
	if st, label := knee(sr); st != nil {
		c.Markers = []Marker{{st.RateAchieved, label}}
	}
	return c
}

// sortSeries orders each series' points by rate, so a search (whose steps
// go up and down) draws one curve.
func sortSeries(ss ...*Series) {
	for _, s := range ss {
		pts := s.Points
		for i := 1; i < len(pts); i++ { // insertion sort: stable, and steps are few
			for j := i; j > 0 && pts[j].X < pts[j-1].X; j-- {
				pts[j], pts[j-1] = pts[j-1], pts[j]
			}
		}
	}
}

// knee is the step at the knee, and its label: a search's answer (the
// highest rate that met the objective), or else the highest passing step
// below the first failing one.
func knee(sr *result.StepsResult) (*result.Step, string) {
	if s := sr.Search; s != nil {
		if s.Rate == 0 {
			return nil, ""
		}
		var best *result.Step
		for i := range sr.Steps {
			st := &sr.Steps[i]
			if st.RateAsked == s.Rate && st.Pass != nil && *st.Pass && (best == nil || st.RateAchieved > best.RateAchieved) {
				best = st
			}
		}
		return best, "knee: " + rateString(s.Rate) + " asked"
	}
	var last *result.Step
	for i := range sr.Steps {
		st := &sr.Steps[i]
		if st.Pass == nil {
			return nil, ""
		}
		if !*st.Pass {
			break
		}
		last = st
	}
	if last == nil || last == &sr.Steps[len(sr.Steps)-1] {
		return nil, "" // no step failed, or the first did: no knee between steps
	}
	return last, "last pass: " + rateString(last.RateAsked) + " asked"
}
