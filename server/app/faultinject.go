//go:build faultinject

package app

// Fault injection, compiled only with -tags faultinject (the tests of
// cmd/weaseldb build such a binary; release builds never carry it):
// GET /debug/panic panics on the event loop that parses it, the way a bug
// in a handler would, so the fail-fast path can be tested end to end.

import "weaseldb/server/metrics"

func init() {
	routes = append(routes, &route{
		path:   "/debug/panic",
		metric: metrics.RouteInvalid,
		serve:  get(func(*handler, *request) { panic("fault injection: GET /debug/panic") }),
		allow:  "Allow: GET, HEAD\r\n",
	})
}
