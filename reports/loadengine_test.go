package reports

import (
	"testing"

	"weaseldb/loadtester/result"
)

func TestLoadEngine(t *testing.T) {
	for _, c := range []struct {
		name  string
		round *Round
		want  string
	}{
		{"no round", nil, "not measured"},
		{"no load", &Round{}, "not measured"},
		{"older result", &Round{Load: &result.Result{}}, "not recorded"},
		{"io_uring", &Round{Load: &result.Result{IOBackend: "io_uring"}}, "`io_uring`"},
		{"fell back", &Round{Load: &result.Result{IOBackend: "epoll", IOBackendFallback: "io_uring_setup: operation not permitted"}},
			"`epoll` (io_uring refused: io_uring_setup: operation not permitted)"},
	} {
		if got := loadEngine(c.round); got != c.want {
			t.Errorf("%s: loadEngine = %q, want %q", c.name, got, c.want)
		}
	}
}
