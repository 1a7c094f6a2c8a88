package gate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// BuildRef builds pkg (e.g. "./cmd/weaseldb") as it was at the git ref into
// out and returns the commit it built. The ref is checked out in a
// temporary `git worktree` beside the current one, so the working tree is
// never touched, and the worktree is removed afterwards whatever happens.
func BuildRef(ctx context.Context, ref, pkg, out string) (commit string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	top, err := gitOutput(ctx, "", "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("building %s: not in a git repository: %w", ref, err)
	}
	commit, err = gitOutput(ctx, top, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("building %s: no such commit", ref)
	}
	tmp, err := os.MkdirTemp("", "gate-worktree-")
	if err != nil {
		return "", fmt.Errorf("building %s: %w", ref, err)
	}
	wt := filepath.Join(tmp, "src")
	defer func() {
		// A fresh context: the cleanup must run even when ctx was cancelled.
		cleanup, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = gitOutput(cleanup, top, "worktree", "remove", "--force", wt)
		_ = os.RemoveAll(tmp)
		_, _ = gitOutput(cleanup, top, "worktree", "prune")
	}()
	if _, err := gitOutput(ctx, top, "worktree", "add", "--detach", wt, commit); err != nil {
		return "", fmt.Errorf("building %s: git worktree add: %w", ref, err)
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", fmt.Errorf("building %s: %w", ref, err)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", abs, pkg)
	cmd.Dir = wt
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %s at %s: %w: %s", pkg, ref, err, firstLine(stderr.String()))
	}
	return commit, nil
}

func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, firstLine(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// firstLine is the first line that says something ("# pkg" headers of go
// build output do not).
func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	return strings.TrimSpace(s)
}

// HeadCommit is the commit HEAD names in dir's repository.
func HeadCommit(ctx context.Context, dir string) (string, error) {
	out, err := gitOutput(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		return "", fmt.Errorf("record: no --commit given and git rev-parse HEAD failed: %w", err)
	}
	return firstLine(out), nil
}
