package valgrind

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestUnexecutableOptions(t *testing.T) {
	for _, tc := range []struct {
		hwcaps string
		off    []string
	}{
		{"amd64-cx16-lzcnt-rdtscp-sse3-ssse3-avx-avx2-bmi-f16c-rdrand", nil},
		{"amd64-cx16-lzcnt-sse3-ssse3-avx-avx2-bmi-f16c-rdrand", []string{"rdtscp"}},
		{"amd64-cx16-rdtscp-sse3-ssse3-avx", []string{"avx2", "fma", "bmi1", "bmi2"}},
		{"amd64-sse2", []string{"rdtscp", "sse3", "ssse3", "avx", "avx2", "fma", "bmi1", "bmi2"}},
	} {
		if got := unexecutableOptions(tc.hwcaps); !slices.Equal(got, tc.off) {
			t.Errorf("%s: off %v, want %v", tc.hwcaps, got, tc.off)
		}
	}
}

func TestEnvGodebug(t *testing.T) {
	v := Env{CPUOff: []string{"rdtscp", "avx2"}, Extra: "cpu.fma=off"}
	want := "asyncpreemptoff=1,memprofilerate=0,cpu.rdtscp=off,cpu.avx2=off,cpu.fma=off"
	if got := v.Godebug(); got != want {
		t.Errorf("Godebug %q, want %q", got, want)
	}
	if env := (Env{}).Environ(); !slices.Equal(env, []string{"GODEBUG=" + baseGodebug, "GOGC=off"}) {
		t.Errorf("Env %v", env)
	}
}

// TestExplainValgrindLog: valgrind 3.19's log of the RDTSCP crash (as it
// was written here, on an AMD EPYC of family 26) becomes one line that
// names the instruction, where Go ran it, and the fix.
func TestExplainValgrindLog(t *testing.T) {
	log, err := os.ReadFile("testdata/valgrind319_rdtscp.log")
	if err != nil {
		t.Fatal(err)
	}
	line, ok := ExplainLog(log)
	if !ok {
		t.Fatal("not explained")
	}
	for _, want := range []string{"RDTSCP (0xF 0x1 0xF9)", "runtime.cputicks.abi0 (asm_amd64.s:1261)", "--cost-godebug", "newer valgrind"} {
		if !strings.Contains(line, want) {
			t.Errorf("%q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "\n") {
		t.Errorf("not one line: %q", line)
	}
	if _, ok := ExplainLog([]byte("==1== I   refs: 4,583,796\n")); ok {
		t.Error("a log without an unrecognised instruction was explained")
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
	got, err := TracedSyscalls(path, int64(len(before)), int64(len(before+window)))
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
