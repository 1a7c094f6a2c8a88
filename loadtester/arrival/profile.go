package arrival

import (
	"fmt"
	"math"
	"time"
)

// Never is the intended time of a request past the profile's end.
const Never = math.MaxInt64

// Profile is the target rate over time: constant, or piecewise linear.
type Profile struct {
	segs  []segment
	total float64 // requests due over all segments; +Inf for a constant rate
}

// segment is a stretch over which the rate moves linearly from r0 to r1.
type segment struct {
	start, dur int64   // ns
	r0, r1     float64 // requests per ns at its start and end
	before     float64 // requests due before it
}

// count is the requests due within the segment by dt ns into it.
func (s segment) count(dt float64) float64 {
	return s.r0*dt + (s.r1-s.r0)*dt*dt/(2*float64(s.dur))
}

// Constant is a profile of rate requests per second for ever.
func Constant(rate float64) *Profile {
	r := rate / 1e9
	return &Profile{segs: []segment{{dur: Never, r0: r, r1: r}}, total: math.Inf(1)}
}

// Ramp is the profile of stages: each moves linearly from the previous
// target (from, for the first) to its own over its duration.
func Ramp(from float64, stages []Stage) (*Profile, error) {
	if len(stages) == 0 {
		return nil, fmt.Errorf("stages: none given")
	}
	p := &Profile{}
	var at int64
	prev := from
	for _, st := range stages {
		s := segment{start: at, dur: int64(st.Duration), r0: prev / 1e9, r1: st.Target / 1e9, before: p.total}
		p.total += s.count(float64(s.dur))
		p.segs = append(p.segs, s)
		at += s.dur
		prev = st.Target
	}
	return p, nil
}

// Duration is how long the profile lasts (0: for ever).
func (p *Profile) Duration() time.Duration {
	if math.IsInf(p.total, 1) {
		return 0
	}
	last := p.segs[len(p.segs)-1]
	return time.Duration(last.start + last.dur)
}

// Peak is the highest rate the profile reaches, requests per second.
func (p *Profile) Peak() float64 {
	var peak float64
	for _, s := range p.segs {
		peak = max(peak, s.r0, s.r1)
	}
	return peak * 1e9
}

// Total is how many requests fall due over the whole profile (+Inf for a
// constant rate).
func (p *Profile) Total() float64 { return p.total }

// Count is how many requests are due by ns (Λ).
func (p *Profile) Count(ns int64) float64 {
	if ns <= 0 {
		return 0
	}
	for _, s := range p.segs {
		if ns < s.start+s.dur || s.dur == Never {
			return s.before + s.count(float64(ns-s.start))
		}
	}
	return p.total
}

// Time is when the n-th request (counted from 0, fractions allowed) falls
// due: the first ns with Count(ns) >= n (Λ⁻¹); Never past the end.
func (p *Profile) Time(n float64) int64 {
	if n <= 0 {
		return 0
	}
	if n >= p.total {
		return Never
	}
	for _, s := range p.segs {
		in := n - s.before
		if s.dur != Never && in > s.count(float64(s.dur)) {
			continue
		}
		return s.start + int64(math.Ceil(s.solve(in)))
	}
	return Never
}

// solve is the dt at which the segment's count reaches n (0 <= n <= its
// count): the root of a·dt² + b·dt − n = 0, in the form that stays exact
// as a goes to 0 (a constant rate).
func (s segment) solve(n float64) float64 {
	if s.r0 == s.r1 { // a constant rate (the usual case): no root to take
		if s.r0 <= 0 {
			return 0
		}
		return n / s.r0
	}
	a, b := (s.r1-s.r0)/(2*float64(s.dur)), s.r0
	disc := b*b + 4*a*n
	if disc < 0 {
		disc = 0 // rounding at the very end of a ramp down to 0
	}
	den := b + math.Sqrt(disc)
	if den <= 0 {
		return 0
	}
	return 2 * n / den
}
