package procstat

import (
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A thread's stat with processor (field 39) 5, utime 7 and stime 3.
const threadStat = "101 (weaseldb) S 1 100 100 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 9 0 270041 3133440 388 18446744073709551615 " +
	"1 2 3 0 0 0 0 0 0 0 0 0 17 5 0 0 0 0 0 4 5 6 7 8 9 10 0\n"

func threadStatus(list string) string {
	return "Name:\tweaseldb\nState:\tS (sleeping)\nTgid:\t100\nPid:\t101\nCpus_allowed:\t20\nCpus_allowed_list:\t" + list + "\n" +
		"voluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n"
}

func TestThreadsFromTaskFiles(t *testing.T) {
	root := fakeProc(t, map[string]string{
		"100/stat":            strings.Replace(threadStat, "101 ", "100 ", 1),
		"100/status":          threadStatus("0-7"),
		"100/task/100/stat":   strings.Replace(threadStat, "101 ", "100 ", 1),
		"100/task/100/status": threadStatus("0-7"),
		"100/task/101/stat":   threadStat,
		"100/task/101/status": threadStatus("5"),
		// A thread that ended after the listing: no files, left out.
		"100/task/102/.gone": "",
	})
	got, err := root.threads(100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d threads, want 2: %+v", len(got), got)
	}
	if got[0].TID != 100 || !slices.Equal(got[0].AllowedCPUs, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("thread 0: %+v", got[0])
	}
	if th := got[1]; th.TID != 101 || th.Comm != "weaseldb" || th.LastCPU != 5 || !slices.Equal(th.AllowedCPUs, []int{5}) || th.CPU != 10*ClockTick ||
		th.State != "S" || th.VoluntarySwitches != 12 || th.NonvoluntarySwitches != 3 {
		t.Errorf("thread 1: %+v, want tid 101, CPU 5 allowed and last, 10 ticks", th)
	}
}

func TestThreadsErrors(t *testing.T) {
	if _, err := fakeProc(t, map[string]string{"1/stat": plainStat}).threads(42); err == nil {
		t.Error("a process that is not there: no error")
	}
	bad := fakeProc(t, map[string]string{"7/task/7/stat": "7 ) x ( S 1", "7/task/7/status": threadStatus("0")})
	if _, err := bad.threads(7); err == nil || !strings.Contains(err.Error(), "thread 7") {
		t.Errorf("malformed stat: %v, want an error naming the thread", err)
	}
	noList := fakeProc(t, map[string]string{"7/task/7/stat": threadStat, "7/task/7/status": "Name:\tx\n"})
	if _, err := noList.threads(7); err == nil {
		t.Error("status without Cpus_allowed_list: no error")
	}
}

// The real /proc: a thread this test pins to one CPU reads back with that
// CPU as its whole allowed set and as the CPU it last ran on.
func TestThreadsReadsPinnedThreadBack(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Skipf("sched_getaffinity: %v", err)
	}
	cpu := -1
	for c := 1023; c >= 0; c-- {
		if set.IsSet(c) {
			cpu = c
			break
		}
	}
	done := make(chan struct{})
	tidc := make(chan int)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		var one unix.CPUSet
		one.Set(cpu)
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			t.Error(err)
		}
		tidc <- unix.Gettid()
		<-done
	}()
	tid := <-tidc
	defer close(done)
	threads, err := Threads(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(threads, func(th Thread) bool { return th.TID == tid })
	if i < 0 {
		t.Fatalf("thread %d not among %d threads", tid, len(threads))
	}
	if th := threads[i]; !slices.Equal(th.AllowedCPUs, []int{cpu}) || th.LastCPU != cpu {
		t.Errorf("pinned thread: %+v, want CPU %d allowed and last", th, cpu)
	}
}

func TestMachineSteal(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	root := fakeProc(t, map[string]string{"stat": "cpu  100 5 50 1000 20 3 2 40 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n"})
	if got, err := root.machineSteal(); err != nil || got != 40*ClockTick {
		t.Errorf("machineSteal = %v, %v; want %v", got, err, 40*ClockTick)
	}
}
