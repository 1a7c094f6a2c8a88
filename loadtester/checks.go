package loadtester

import (
	"fmt"
	"slices"
	"strings"

	"weaseldb/loadtester/check"
	"weaseldb/loadtester/result"
)

// Response checks (--check): the config's expressions, parsed by the check
// package; the network thread judges each response with them (judge: an
// HTTP/1.1 response as it is parsed, an HTTP/2 one as its stream ends)
// and the collector adds up each check's outcomes.

// checkChecks parses every --check; each error names the expression.
func (c *Config) checkChecks() []error {
	var errs []error
	for _, e := range c.Checks {
		if _, err := check.Parse(e); err != nil {
			errs = append(errs, err)
		}
	}
	for _, th := range c.Thresholds {
		if th.Check != "" && !c.hasCheck(th.Check) {
			errs = append(errs, fmt.Errorf("--threshold %q: names no --check (give --check %q too)", th.Expr, th.Check))
		}
		if th.Metric == "checks" && !c.anyCheck() { // it would have nothing to judge, and fail at the end
			errs = append(errs, fmt.Errorf("--threshold %q: no --check (nor a workload kind's check) to judge; give --check EXPR", th.Expr))
		}
	}
	return errs
}

// anyCheck reports whether a --check or a workload kind's check is given.
func (c *Config) anyCheck() bool {
	if len(c.Checks) > 0 {
		return true
	}
	if c.Workload != nil {
		for _, k := range c.Workload.Kinds {
			if len(k.Checks) > 0 {
				return true
			}
		}
	}
	return false
}

// hasCheck reports whether a --check or a workload kind's check reads
// expr (spaces ignored).
func (c *Config) hasCheck(expr string) bool {
	list := c.Checks
	if c.Workload != nil {
		for _, k := range c.Workload.Kinds {
			list = append(list[:len(list):len(list)], k.Checks...)
		}
	}
	for _, e := range list {
		if strings.Join(strings.Fields(e), "") == expr {
			return true
		}
	}
	return false
}

// checkResults adds up the threads' check outcomes (once every loop has
// exited), one row per check in the order given.
func (c *collector) checkResults() []result.CheckResult {
	r := c.r
	if len(r.checks) == 0 {
		return nil
	}
	out := make([]result.CheckResult, len(r.checks))
	for i, ch := range r.checks {
		out[i].Expr = ch.Expr
		out[i].Kinds = r.checkKinds(i)
		for _, t := range r.threads {
			if t.acct.books.checkPass != nil {
				out[i].Passed += t.acct.books.checkPass[i]
				out[i].Failed += t.acct.books.checkFail[i]
			}
		}
	}
	return out
}

// checkKinds names the kinds check i judges, or nil when it judges every
// kind's responses.
func (r *runner) checkKinds(i int) []string {
	var names []string
	for _, k := range r.kinds {
		if slices.Contains(k.checks, i) {
			names = append(names, k.Name)
		}
	}
	if len(names) == len(r.kinds) {
		return nil
	}
	return names
}

// judge judges the response to ring entry i of c (its status, header
// lines and kept body) against its kind's checks (every --check and the
// kind's own), counting each check's outcome when the request belongs to
// the measured window (loop thread only).
func (a *accounts) judge(c *conn, i int, status int, head, body []byte) bool {
	var kind uint8
	if c.kinds != nil {
		kind = c.kinds[i]
	}
	checks := a.r.kinds[kind].checks
	if len(checks) == 0 {
		return true
	}
	b := &a.books
	resp := &b.checkResp
	resp.Status, resp.Header, resp.Body = status, head, body
	measured := c.sendTimes[i] >= a.win.start
	if measured && b.checkPass == nil {
		b.checkPass, b.checkFail = make([]int64, len(a.r.checks)), make([]int64, len(a.r.checks))
	}
	ok := true
	for _, i := range checks {
		ch := a.r.checks[i]
		pass := ch.Pass(resp)
		ok = ok && pass
		switch {
		case !measured:
		case pass:
			b.checkPass[i]++
		default:
			b.checkFail[i]++
		}
	}
	return ok
}
