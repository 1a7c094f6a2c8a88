package store

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"weaseldb/server/api"
)

// Limits is how much history is kept: request ids and their outcomes (for
// GET /v1/status and duplicate answers) and committed transactions (for
// GET /v1/subscribe) are kept until they are past BOTH limits: older than
// Age and more than Versions behind the newest version. Either limit alone
// keeps them (the seed's request_id_retention_versions is a minimum kept
// "regardless of time"), so a client may rely on whichever is longer.
type Limits struct {
	Versions int64
	Age      time.Duration
}

// Past reports whether history at version, recorded at, is past both
// limits once the newest version is last and the time is now.
func (l Limits) Past(version, last int64, at, now time.Time) bool {
	return version <= last-l.Versions && now.Sub(at) >= l.Age
}

// MaxPolicies bounds the number of retention policies.
const MaxPolicies = 1024

// ErrTooManyPolicies is returned by Put when MaxPolicies are stored.
var ErrTooManyPolicies = errors.New("too many retention policies")

// Retention holds the retention policies and the effective Limits.
//
// Goroutine-safe: the HTTP handlers of /v1/retention change policies (under
// mu); the sequence and persist stages and the subscription log read the
// effective limits with one atomic load per batch, so they never wait on a
// policy change.
//
// Each policy states how much history one consumer needs. The effective
// limit in each dimension is the most generous policy's, capped by the
// configured base (request_id_retention_versions and _hours); with no
// policies the base applies. History is kept while within either limit
// (see Limits), so a policy that leaves a dimension out needs nothing in
// that dimension: {"seconds": 60} alone keeps one minute, whatever the
// number of versions.
type Retention struct {
	base      Limits
	mu        sync.Mutex
	policies  map[string]api.RetentionPolicy // guarded by mu
	effective atomic.Pointer[Limits]
}

// NewRetention starts with no policies and base as the effective limits.
func NewRetention(base Limits) *Retention {
	r := &Retention{base: base, policies: make(map[string]api.RetentionPolicy)}
	r.effective.Store(&base)
	return r
}

// Limits returns the effective limits (one atomic load).
func (r *Retention) Limits() Limits { return *r.effective.Load() }

// Base returns the configured limits.
func (r *Retention) Base() Limits { return r.base }

// Put stores or replaces policy id; created is false on a replace. The
// caller validates id (api.ValidatePolicyID) and p (api.ParseRetentionPolicy).
func (r *Retention) Put(id string, p api.RetentionPolicy) (created bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, exists := r.policies[id]
	if !exists && len(r.policies) >= MaxPolicies {
		return false, ErrTooManyPolicies
	}
	r.policies[id] = p
	r.recompute()
	return !exists, nil
}

// Get returns policy id.
func (r *Retention) Get(id string) (api.RetentionPolicy, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.policies[id]
	return p, ok
}

// Delete removes policy id and reports whether it existed.
func (r *Retention) Delete(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.policies[id]
	delete(r.policies, id)
	r.recompute()
	return ok
}

// List returns every policy, sorted by id.
func (r *Retention) List() []api.NamedPolicy {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]api.NamedPolicy, 0, len(r.policies))
	for id, p := range r.policies {
		out = append(out, api.NamedPolicy{ID: id, Policy: p})
	}
	slices.SortFunc(out, func(a, b api.NamedPolicy) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out
}

// recompute publishes the effective limits; mu is held.
func (r *Retention) recompute() {
	eff := r.base
	if len(r.policies) > 0 {
		eff = Limits{}
		for _, p := range r.policies {
			eff.Versions = max(eff.Versions, min(p.Versions, r.base.Versions))
			eff.Age = max(eff.Age, min(time.Duration(p.Seconds)*time.Second, r.base.Age))
		}
	}
	r.effective.Store(&eff)
}
