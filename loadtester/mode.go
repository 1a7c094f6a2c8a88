package loadtester

// Load modes: what sends a run's requests, one type a mode, chosen once
// when a thread is built (newLoadMode) and never tested again by the
// loop. The closed loop (mode_closed.go), the closed loop under a
// connection ramp (mode_ramp.go: --concurrency-stages) and the open loop
// (mode_open.go: --rate, --stages, --arrival, its pacer in openloop.go)
// are the three; a new mode is one new file behind loadMode. Rate steps
// and the knee search run whole runs, one a step, above the modes
// (steps.go, search.go).
//
// Who owns what: a thread's mode is its loop's alone (thread.go); the
// closed and open loops are kept inside the thread (netThread embeds
// them), so what they hold is the thread's.

// loadMode is what the loop asks of the run's load mode.
type loadMode interface {
	// paced reports whether requests have intended send times (the open
	// loop): each ring keeps when its requests were written, and the
	// loop's thread cuts its timer slack.
	paced() bool
	// connUp runs when c comes up, at now.
	connUp(c *conn, now int64)
	// served runs once responses were read on c at now.
	served(c *conn, now int64)
	// turn runs once a loop turn, under accounts.mu, at now.
	turn(now int64)
}

// newLoadMode is t's mode under its run's config.
func newLoadMode(t *netThread) loadMode {
	t.closedLoop.t, t.openLoop.t = t, t
	switch {
	case t.r.cfg.OpenLoop():
		return &t.openLoop
	case t.r.ramp != nil:
		return &rampedLoop{closedLoop{t}}
	}
	return &t.closedLoop
}
