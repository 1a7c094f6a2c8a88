package valgrind

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Control runs callgrind_control on the process pid: flag -z zeroes its
// counters, -d dumps them. vgdbPrefix is where valgrind --vgdb-prefix put
// its FIFOs.
func Control(ctx context.Context, control, vgdbPrefix, flag string, pid int) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, control, "--vgdb-prefix="+vgdbPrefix, flag, strconv.Itoa(pid)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s %d: %w: %s", control, flag, pid, err, LastLine(out))
	}
	return nil
}

// valgrind --trace-syscalls writes "SYSCALL[pid,tid](nr) sys_name(...)"
// when a call starts (and "... --> Success" lines without the name when a
// blocking one ends).
var tracedSyscall = regexp.MustCompile(`^SYSCALL\[\d+,\d+\]\(\s*\d+\)\s+(sys_[a-z0-9_]+)`)

// TracedSyscalls counts the system calls valgrind traced between two
// offsets of its log, by name, clock reads left out.
func TracedSyscalls(path string, from, to int64) (map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, err
	}
	calls := map[string]int{}
	sc := bufio.NewScanner(io.LimitReader(f, to-from))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		m := tracedSyscall.FindStringSubmatch(sc.Text())
		if m == nil || m[1] == "sys_clock_gettime" || m[1] == "sys_gettimeofday" {
			continue
		}
		calls[strings.TrimPrefix(m[1], "sys_")]++
	}
	return calls, sc.Err()
}
