package serverproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"weaseldb/internal/affinity"
)

const orphanHelperEnv = "SERVERPROC_ORPHAN_HELPER"

// TestOrphanHelper, re-run by TestChildrenDieWithTheirParent, starts two
// children that would run for a minute (one pinned, one not), prints their
// pids, and waits to be killed.
func TestOrphanHelper(t *testing.T) {
	if os.Getenv(orphanHelperEnv) != "1" {
		t.Skip("run by TestChildrenDieWithTheirParent")
	}
	allowed, _ := affinity.AllowedCPUs()
	plain := exec.Command("sleep", "60")
	pinned := exec.Command("sleep", "60")
	if err := Spawn(plain); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	if err := StartOn(pinned, allowed[:1]); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("pids", plain.Process.Pid, pinned.Process.Pid)
	time.Sleep(60 * time.Second)
}

// A process the harness started does not outlive it, even when the harness
// is killed with SIGKILL (no deferred Stop runs): the kernel kills it
// (Pdeathsig), whichever thread asked for the start.
func TestChildrenDieWithTheirParent(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestOrphanHelper$")
	cmd.Env = append(os.Environ(), orphanHelperEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var pids []int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "pids" {
			for _, s := range f[1:] {
				pid, _ := strconv.Atoi(s)
				pids = append(pids, pid)
			}
			break
		}
	}
	if len(pids) != 2 {
		t.Fatal("the helper printed no pids")
	}
	defer func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL) // if the test failed, clean up
		}
	}()
	cmd.Process.Kill()
	cmd.Wait()
	for _, pid := range pids {
		deadline := time.Now().Add(10 * time.Second)
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("child %d still runs after its parent was killed", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// alive tells whether pid runs (a zombie, dead but not reaped, does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
