package affinity

import (
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseAndFormatCPUList(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		format  string
		wantErr bool
	}{
		{"0", []int{0}, "0", false},
		{"0-3,8,10-11", []int{0, 1, 2, 3, 8, 10, 11}, "0-3,8,10-11", false},
		{" 2, 1 ", []int{2, 1}, "1-2", false},
		{"1030-1031", []int{1030, 1031}, "1030-1031", false},
		{"", nil, "", true},
		{"a", nil, "", true},
		{"3-1", nil, "", true},
		{"-1", nil, "", true},
		{"0-99999999", nil, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseCPUList(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if f := FormatCPUList(got); f != tc.format {
				t.Fatalf("FormatCPUList = %q, want %q", f, tc.format)
			}
		})
	}
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-3,8", "1", "", "5-2", "0-1023,2048"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUList(s)
		if err != nil || len(cpus) > 1<<16 {
			return
		}
		again, err := ParseCPUList(FormatCPUList(cpus))
		if err != nil {
			t.Fatalf("FormatCPUList(%v) does not parse back: %v", cpus, err)
		}
		if FormatCPUList(again) != FormatCPUList(cpus) {
			t.Fatalf("round trip changed %v into %v", cpus, again)
		}
	})
}

func TestValidate(t *testing.T) {
	allowed := []int{0, 1, 4, 5}
	tests := []struct {
		name string
		cpus []int
		want string
	}{
		{"ok", []int{1, 4}, ""},
		{"empty", nil, "empty CPU list"},
		{"not allowed", []int{1, 2}, "CPU 2 is not available to this process (allowed: 0-1,4-5)"},
		{"duplicate", []int{4, 4}, "listed twice"},
		{"negative", []int{-1}, "out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.cpus, allowed)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestGOMAXPROCSFor(t *testing.T) {
	if got := GOMAXPROCSFor(3, 2); got != 4 {
		t.Fatalf("3 pinned threads with GOMAXPROCS 2: got %d, want 4", got)
	}
	if got := GOMAXPROCSFor(2, 16); got != 16 {
		t.Fatalf("never lowers GOMAXPROCS: got %d", got)
	}
}

func TestDynamicSetBeyond1024(t *testing.T) {
	cpus := []int{3, 1023, 1024, 2047, 4100}
	set := dynamicSet(cpus)
	if got := dynamicSetCPUs(set, 4101); !reflect.DeepEqual(got, cpus) {
		t.Fatalf("round trip through a dynamic set gave %v, want %v", got, cpus)
	}
}

func TestAllowedCPUs(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(allowed) == 0 {
		t.Fatal("no allowed CPUs")
	}
	fromProc, err := ThreadAllowedCPUs(unix.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(allowed, fromProc) {
		t.Fatalf("sched_getaffinity says %v, /proc says %v", allowed, fromProc)
	}
}

// pinAndReadBack pins a fresh goroutine's thread to cpus and returns what
// /proc says that thread may use. The goroutine exits still locked, so the
// runtime ends the pinned thread.
func pinAndReadBack(t *testing.T, cpus []int) ([]int, error) {
	t.Helper()
	type result struct {
		got []int
		err error
	}
	ch := make(chan result, 1)
	go func() {
		if err := PinCurrentThread(cpus); err != nil {
			ch <- result{err: err}
			return
		}
		got, err := ThreadAllowedCPUs(unix.Gettid())
		ch <- result{got, err}
	}()
	r := <-ch
	return r.got, r.err
}

func TestPinnedThreadAffinityIsWhatWasAsked(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	cases := [][]int{{allowed[len(allowed)-1]}, {allowed[0]}, allowed}
	for _, cpus := range cases {
		t.Run(FormatCPUList(cpus), func(t *testing.T) {
			got, err := pinAndReadBack(t, cpus)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, cpus) {
				t.Fatalf("thread pinned to %v reports Cpus_allowed_list %v", cpus, got)
			}
		})
	}
	// Pinning never leaks: this goroutine's (unpinned) view is unchanged.
	after, err := AllowedCPUs()
	if err != nil || !reflect.DeepEqual(after, allowed) {
		t.Fatalf("allowed set changed from %v to %v (%v)", allowed, after, err)
	}
}

func TestPinRefusesImpossibleCPUs(t *testing.T) {
	allowed, _ := AllowedCPUs()
	tests := []struct {
		name string
		cpus []int
	}{
		{"empty", nil},
		{"negative", []int{-1}},
		{"absent CPU", []int{allowed[len(allowed)-1] + 4096}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := pinAndReadBack(t, tc.cpus); err == nil {
				t.Fatalf("pinning to %v succeeded", tc.cpus)
			}
		})
	}
}
