package arrival

import (
	"fmt"
	"math"
)

// Kind is an arrival process.
type Kind uint8

const (
	Even    Kind = iota // evenly spaced: a fixed interval at a constant rate
	Poisson             // exponential inter-arrival times
)

// ParseKind reads --arrival: "constant" or "poisson".
func ParseKind(s string) (Kind, error) {
	switch s {
	case "", "constant":
		return Even, nil
	case "poisson":
		return Poisson, nil
	}
	return 0, fmt.Errorf("--arrival %q: want constant or poisson", s)
}

func (k Kind) String() string {
	if k == Poisson {
		return "poisson"
	}
	return "constant"
}

// points is an arrival process in count space, for one thread: where its
// k-th point lies.
type points interface {
	at(k uint64) float64
	index(n float64) uint64 // the first k with at(k) >= n
}

// Schedule is one network thread's share of a profile's requests
// (owned by that thread: the Poisson process keeps a cursor).
type Schedule struct {
	prof *Profile
	pts  points
}

// NewSchedule is thread id's schedule of threads.
func NewSchedule(p *Profile, kind Kind, seed uint64, threads, id int) *Schedule {
	t := float64(threads)
	var pts points = evenPoints{threads: t, id: float64(id)}
	if kind == Poisson {
		pts = newPoissonPoints(seed, threads, id)
	}
	return &Schedule{prof: p, pts: pts}
}

// At is when the thread's k-th request falls due, ns from the origin
// (Never past the profile's end).
func (s *Schedule) At(k uint64) int64 { return s.prof.Time(s.pts.at(k)) }

// Index is the first k whose request falls due at or after ns.
func (s *Schedule) Index(ns int64) uint64 {
	if ns <= 0 {
		return 0
	}
	// A guess from the count (At(k) >= ns exactly when the k-th point lies
	// past Count(ns-1)), then exact by stepping, as Time rounds up.
	k := s.pts.index(math.Nextafter(s.prof.Count(ns-1), math.Inf(1)))
	for k > 0 && s.At(k-1) >= ns {
		k--
	}
	for s.At(k) < ns {
		k++
	}
	return k
}

// evenPoints: thread id of T takes points id, id+T, id+2T, ...
type evenPoints struct{ threads, id float64 }

func (e evenPoints) at(k uint64) float64 { return float64(k)*e.threads + e.id }

func (e evenPoints) index(n float64) uint64 {
	if n <= e.id {
		return 0
	}
	if math.IsInf(n, 1) {
		return math.MaxUint64 / 2
	}
	return uint64(math.Ceil((n - e.id) / e.threads))
}
