package gate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weaseldb/gate/result"
	"weaseldb/gate/verdict"
)

// The CPU model is procstat's (its tests read recorded cpuinfo texts of
// amd64 and arm64); the machine is described whole.
func TestThisMachine(t *testing.T) {
	m := ThisMachine("")
	if m.CPUModel == "" || m.Cores < 1 || m.Kernel == "" || !strings.HasPrefix(m.GoVersion, "go") {
		t.Errorf("ThisMachine: %+v", m)
	}
}

func TestBaselineReadWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "baseline.json")
	b := Baseline{Command: "gate --update-baseline", Binary: "build/weaseldb", Machine: ThisMachine(""),
		Settings: result.Settings{Network: "unix", DurationS: 1, Concurrency: 64}, SamplesRPS: []float64{100, 110, 90}}
	if err := WriteBaseline(p, b); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBaseline(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.MedianRPS != 100 || got.Version != BaselineVersion || got.Machine != b.Machine || len(got.SamplesRPS) != 3 {
		t.Errorf("read back %+v", got)
	}
	if _, err := os.Stat(p + ".tmp"); !os.IsNotExist(err) {
		t.Error("temp file left behind")
	}
	bad := map[string]string{
		"not json":       "{",
		"old version":    `{"version": 0, "samples_rps": [1]}`,
		"no samples":     `{"version": 1, "samples_rps": []}`,
		"negative":       `{"version": 1, "samples_rps": [100, -1]}`,
		"missing a file": "",
	}
	for name, content := range bad {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		if content != "" {
			os.WriteFile(path, []byte(content), 0o644)
		}
		if _, err := ReadBaseline(path); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

// TestBuildRef builds a tiny program at an older commit of a scratch
// repository and checks the worktree is gone afterwards.
func TestBuildRef(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("go.mod", "module scratch\n\ngo 1.21\n")
	write("cmd/hello/main.go", "package main\n\nfunc main() { println(\"old\") }\n")
	git("add", ".")
	git("commit", "-q", "-m", "old")
	write("cmd/hello/main.go", "package main\n\nfunc main() { println(\"new\") }\n")
	git("commit", "-q", "-am", "new")
	t.Chdir(repo)

	out := filepath.Join(t.TempDir(), "hello")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	commit, err := BuildRef(ctx, "HEAD~1", "./cmd/hello", out)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := exec.Command("git", "-C", repo, "rev-parse", "HEAD~1").Output(); commit != strings.TrimSpace(string(want)) {
		t.Errorf("built commit %q, want %q", commit, want)
	}
	got, err := exec.Command(out).CombinedOutput()
	if err != nil || strings.TrimSpace(string(got)) != "old" {
		t.Errorf("built binary says %q (%v), want the old commit's \"old\"", got, err)
	}
	list, _ := exec.Command("git", "-C", repo, "worktree", "list").Output()
	if n := len(strings.Split(strings.TrimSpace(string(list)), "\n")); n != 1 {
		t.Errorf("worktree left behind:\n%s", list)
	}
	// Through the gate: A built at the ref, named by it (its binary is
	// gone with the gate's temp dir), and a bad ref is bad input.
	o := synthOptions(t)
	o.A, o.ARef, o.RefPackage = "", "HEAD~1", "./cmd/hello"
	r := runSynth(t, o, newSynthLab(nil))
	if want := "./cmd/hello at HEAD~1 (" + result.ShortHash(commit) + ")"; r.A.Binary != want || r.Verdict != verdict.Pass {
		t.Errorf("--a-ref: A is %q (%s: %s), want %q", r.A.Binary, r.Verdict, r.Reason, want)
	}
	o.ARef = "no-such-ref"
	if r := runSynth(t, o, newSynthLab(nil)); r.ReasonCode != verdict.ReasonBadInput || !strings.Contains(r.Reason, "no such commit") {
		t.Errorf("bad --a-ref: %s (%s): %s", r.Verdict, r.ReasonCode, r.Reason)
	}
	if _, err := BuildRef(ctx, "no-such-ref", "./cmd/hello", out); err == nil || !strings.Contains(err.Error(), "no such commit") {
		t.Errorf("bad ref: %v", err)
	}
}
