package result

import (
	"bytes"
	"strings"
	"testing"
)

// The summary says "1 request" and "1 error", not "1 requests".
func TestSummarySingular(t *testing.T) {
	var out bytes.Buffer
	r := Result{Target: "http://h/", Requests: 1, Errors: 1, DurationS: 1}
	r.PrintSummary(&out)
	if first := strings.SplitN(strings.TrimSpace(out.String()), "\n", 2)[0]; !strings.Contains(first, "1 request in") || !strings.Contains(first, "1 error") || strings.Contains(first, "1 errors") {
		t.Errorf("%q: want 1 request, 1 error", first)
	}
}
