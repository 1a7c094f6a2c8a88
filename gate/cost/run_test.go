package cost

import (
	"strings"
	"testing"
)

func TestParseAllocCounters(t *testing.T) {
	text := `# HELP go_memstats_mallocs_total Total number of heap objects allocated.
# TYPE go_memstats_mallocs_total counter
go_memstats_mallocs_total 12345
go_memstats_alloc_bytes_total 6.5e+06
go_memstats_alloc_bytes 100
`
	a, err := parseAllocCounters(strings.NewReader(text))
	if err != nil || a.mallocs != 12345 || a.bytes != 6.5e6 {
		t.Fatalf("counters %+v, %v", a, err)
	}
	for _, bad := range []string{"", "go_memstats_mallocs_total 1\n", "go_memstats_mallocs_total x\ngo_memstats_alloc_bytes_total 1\n"} {
		if _, err := parseAllocCounters(strings.NewReader(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
