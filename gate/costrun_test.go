package gate

import (
	"os"
	"path/filepath"
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

// System calls are counted from valgrind's trace between two offsets, by
// name, one per call (a blocking call's completion line has no name), the
// clock reads left out.
func TestTracedSyscalls(t *testing.T) {
	before := "SYSCALL[1,1](232) sys_epoll_pwait ( 4, 0x1, 128, -1 ) --> [async] ...\n"
	window := `SYSCALL[1,1](232) ... [async] --> Success(0x1)
SYSCALL[1,1](0) sys_read ( 7, 0x5, 16384 ) --> Success(0x28)
SYSCALL[1,2](228) sys_clock_gettime( 1, 0x52002d60 )[sync] --> Success(0x0)
SYSCALL[1,3](202) sys_futex ( 0xb59da0, 129, 1, 0x0, 0x0 ) --> [async] ...
SYSCALL[1,1](1) sys_write ( 7, 0x6, 96 ) --> Success(0x60)
SYSCALL[1,1](0) sys_read ( 7, 0x5, 16384 ) --> Success(0x28)
`
	path := filepath.Join(t.TempDir(), "vg.log")
	if err := os.WriteFile(path, []byte(before+window+"SYSCALL[1,1](1) sys_write ( 7 )\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := tracedSyscalls(path, int64(len(before)), int64(len(before+window)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"read": 2, "write": 1, "futex": 1}
	if len(got) != len(want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d, want %d (all %v)", k, got[k], v, got)
		}
	}
}
