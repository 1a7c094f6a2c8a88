package numfmt

import "testing"

// Count puts the noun in the plural unless there is exactly one; WasWere
// agrees with it.
func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n          int64
		noun, want string
		verb       string
	}{
		{0, "request", "0 requests", "were"}, {1, "request", "1 request", "was"}, {2, "request", "2 requests", "were"},
		{-1, "request", "-1 requests", "were"}, {1, "latency", "1 latency", "was"}, {3, "latency", "3 latencies", "were"},
		{2, "key", "2 keys", "were"},
	} {
		if got := Count(tc.n, tc.noun); got != tc.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tc.n, tc.noun, got, tc.want)
		}
		if got := WasWere(tc.n); got != tc.verb {
			t.Errorf("WasWere(%d) = %q, want %q", tc.n, got, tc.verb)
		}
	}
}
