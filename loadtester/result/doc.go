// Package result is a load tester run's result as its readers see it: the
// schemas of a run, a rate-steps document, a knee search and a workload's
// kinds; reading and writing them as JSON; the exact merge of several
// instances' results; the HDR interval log; thresholds and their judging;
// the verdict; and printing them as text. It is pure (no sockets, TLS or
// HTTP/2 among its imports), so the report, the gate, the bench runner and
// internal/loadrun read results without linking the engine that makes them
// (weaseldb/loadtester). Writing the vegeta file, which needs vegeta's
// library and with it net/http, is its subpackage vegetafile's.
//
// Ownership: a Result is built by one goroutine (the engine's collector, a
// reader or a merge) and read-only once handed out.
package result
