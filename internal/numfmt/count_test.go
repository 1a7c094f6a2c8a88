package numfmt

import "testing"

// Count puts the noun in the plural unless there is exactly one.
func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 requests"}, {1, "1 request"}, {2, "2 requests"}, {-1, "-1 requests"}} {
		if got := Count(tc.n, "request"); got != tc.want {
			t.Errorf("Count(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
