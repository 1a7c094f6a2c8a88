package loadtester

import (
	"errors"
	"fmt"
	"strings"

	"weaseldb/loadtester/check"
	"weaseldb/loadtester/result"
)

// Response checks (--check): the config's expressions, parsed by the check
// package; the network thread judges each response with them (netloop.go,
// passChecks) and the collector adds up each check's outcomes.

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
	}
	if len(c.Checks) > 0 && c.HTTP2 {
		errs = append(errs, errors.New("--check with --http2: not supported yet (HTTP/1.1 and HTTPS only)"))
	}
	return errs
}

// hasCheck reports whether a --check reads expr (spaces ignored).
func (c *Config) hasCheck(expr string) bool {
	for _, e := range c.Checks {
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
		for _, t := range r.threads {
			if t.books.checkPass != nil {
				out[i].Passed += t.books.checkPass[i]
				out[i].Failed += t.books.checkFail[i]
			}
		}
	}
	return out
}

// passChecks judges the response just read against every --check,
// counting each check's outcome when the request belongs to the measured
// window (loop thread only).
func (t *netThread) passChecks(c *conn) bool {
	b := &t.books
	resp := &b.checkResp
	resp.Status, resp.Header, resp.Body = c.parser.status, c.parser.head, c.parser.body
	measured := c.sendTimes[c.head] >= t.win.start
	if measured && b.checkPass == nil {
		b.checkPass, b.checkFail = make([]int64, len(t.r.checks)), make([]int64, len(t.r.checks))
	}
	ok := true
	for i, ch := range t.r.checks {
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
