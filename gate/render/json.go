package render

import (
	"math"
	"slices"

	"weaseldb/gate/result"
	"weaseldb/gate/stats"
	"weaseldb/internal/jsonfile"
)

// WriteJSON writes the result as indented JSON; statistics that could not
// be computed (NaN, infinite interval ends, which JSON lacks) are written
// as 0.
func WriteJSON(path string, r *result.Result) error {
	c := *r
	c.Scenarios = make([]result.ScenarioResult, len(r.Scenarios))
	for i, s := range r.Scenarios {
		s.Judgement = jsonSafe(s.Judgement)
		c.Scenarios[i] = s
	}
	return jsonfile.WriteFile(path, &c)
}

// jsonSafe is a copy of j with its NaN and Inf statistics written as 0.
func jsonSafe(j result.Judgement) result.Judgement {
	c := j
	fix := func(f *float64) {
		if math.IsNaN(*f) || math.IsInf(*f, 0) {
			*f = 0
		}
	}
	fixCI := func(ci *stats.RatioCI) {
		for _, f := range []*float64{&ci.Ratio, &ci.Low, &ci.High, &ci.Confidence} {
			fix(f)
		}
	}
	fixCI(&c.CI)
	for _, f := range []*float64{&c.Rank.P, &c.RatioSpread, &c.A.MedianRPS, &c.A.Spread, &c.B.MedianRPS, &c.B.Spread} {
		fix(f)
	}
	c.Looks = slices.Clone(j.Looks)
	for i := range c.Looks {
		fix(&c.Looks[i].Ratio)
		fix(&c.Looks[i].Low)
		fix(&c.Looks[i].High)
	}
	if j.CPU != nil { // a round whose window could not be read is NaN
		cpu := *j.CPU
		cpu.SamplesA, cpu.SamplesB = slices.Clone(cpu.SamplesA), slices.Clone(cpu.SamplesB)
		for _, xs := range [][]float64{cpu.SamplesA, cpu.SamplesB} {
			for i := range xs {
				fix(&xs[i])
			}
		}
		fix(&cpu.MedianA)
		fix(&cpu.MedianB)
		fixCI(&cpu.CI)
		c.CPU = &cpu
	}
	return c
}
