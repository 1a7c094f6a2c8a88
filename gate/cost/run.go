package cost

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"weaseldb/gate/callgrind"
	"weaseldb/gate/launch"
	"weaseldb/gate/result"
	"weaseldb/gate/valgrind"
	"weaseldb/internal/serverproc"
	loadresult "weaseldb/loadtester/result"
)

// One cost run: a server under callgrind, its scenario's setup, a fixed
// number of requests at a fixed open-loop rate, and what they cost. The
// instruction counters are zeroed once the setup is done and dumped once
// the last response is in, so the count covers the measured requests
// alone; the process is then killed with SIGKILL (callgrind aborts on
// SIGTERM, and the dump is already on disk).

// Spec is one cost run of one side.
type Spec struct {
	Side       string // "A" or "B"
	Binary     string
	ConfigData []byte // the user's config; interfaces are replaced
	Dir        string // this run's files go here
	Scenario   Scenario
	Run        int // 1, 2, ...: names the files
	Requests   int
	Rate       float64
	LoadTester string
	Valgrind   string // the valgrind binary
	// Env is the server's environment under valgrind (valgrind.Env.Environ).
	Env     []string
	Control string // callgrind_control
	// SetupSlowdown divides an open-loop setup's rate and multiplies its
	// duration, so the same requests are due at a pace a server under
	// valgrind keeps up with.
	SetupSlowdown float64
	StartTimeout  time.Duration
}

// RunOnce performs one cost run. Its error is one line.
func RunOnce(ctx context.Context, spec Spec) (result.CostSample, error) {
	began := time.Now()
	sample := result.CostSample{Run: spec.Run}
	name := fmt.Sprintf("cost-%s-%s-%d", strings.ToLower(spec.Side), spec.Scenario.Name, spec.Run)
	target, _ := launch.NewTarget("unix", spec.Dir, name)
	doc, err := launch.ServerConfig(spec.ConfigData, target)
	if err != nil {
		return sample, err
	}
	outPrefix := filepath.Join(spec.Dir, name+".callgrind")
	logPath := filepath.Join(spec.Dir, name+".valgrind.log")
	// The FIFOs valgrind's gdbserver makes for callgrind_control live in
	// the run's directory, not /tmp: the process is killed with SIGKILL,
	// which leaves them behind.
	vgdbPrefix := filepath.Join(spec.Dir, "vgdb")
	wrapper := []string{spec.Valgrind, "--tool=callgrind", "--callgrind-out-file=" + outPrefix + ".%p", "--vgdb-prefix=" + vgdbPrefix,
		"--trace-syscalls=yes", "--log-file=" + logPath}
	proc, err := serverproc.Start(serverproc.Spec{Name: "server " + spec.Side + " (callgrind)", Binary: spec.Binary,
		Config: doc, ConfigFile: filepath.Join(spec.Dir, name+".toml"), Dir: spec.Dir, Wrapper: wrapper, Env: spec.Env,
		StartTimeout: spec.StartTimeout})
	if err != nil {
		return sample, fmt.Errorf("%w%s", err, valgrind.Cause(logPath))
	}
	defer proc.Kill()
	pid := proc.Pid()
	load := func(shape result.LoadShape, dur time.Duration, phase string) (loadresult.Result, error) {
		res, err := launch.RunLoad(ctx, launch.LoadSpec{Binary: spec.LoadTester, Target: target, Duration: dur, Concurrency: max(shape.Concurrency, 1),
			Threads: 1, Path: shape.Path, Extra: append(launch.ShapeArgs(shape), "--drain", "10s", "--timeout", "10s"),
			JSONPath: filepath.Join(spec.Dir, fmt.Sprintf("%s-%s.json", name, phase)), Scenario: spec.Scenario.Name, Phase: phase})
		if err == nil {
			err = cleanCostRun(res)
		}
		if err != nil {
			return res, fmt.Errorf("server %s under callgrind, %s: %w", spec.Side, phase, err)
		}
		return res, nil
	}
	for i, u := range spec.Scenario.Setup {
		shape, dur := u.LoadShape, u.Duration.Duration
		if shape.Rate > 0 && spec.SetupSlowdown > 1 {
			shape.Rate /= spec.SetupSlowdown
			dur = time.Duration(float64(dur) * spec.SetupSlowdown)
		}
		if _, err := load(shape, dur, fmt.Sprintf("setup%d", i+1)); err != nil {
			return sample, err
		}
	}
	// Three reads before the window: the first warms the scrape's own
	// buffers, the two after it measure what one read allocates.
	client := unixHTTPClient(target.Path)
	_, err0 := readAllocCounters(ctx, client)
	m0, err1 := readAllocCounters(ctx, client)
	m1, err2 := readAllocCounters(ctx, client)
	if err := errors.Join(err0, err1, err2); err != nil {
		return sample, fmt.Errorf("server %s: %w", spec.Side, err)
	}
	if err := valgrind.Control(ctx, spec.Control, vgdbPrefix, "-z", pid); err != nil {
		return sample, err
	}
	logFrom := fileSize(logPath)
	shape := spec.Scenario.LoadShape
	// One connection, so that each request arrives as it was due, alone,
	// on both sides (a pipelined scenario keeps its depth, which matters
	// only when a response is late, or with [scenario.cost]'s --burst).
	shape.Rate, shape.Concurrency = spec.Rate, 1
	shape.LoadArgs = append(append([]string(nil), shape.LoadArgs...), spec.Scenario.Cost.LoadArgs...)
	res, err := load(shape, time.Duration(float64(spec.Requests)/spec.Rate*float64(time.Second)), "measured")
	if err != nil {
		return sample, err
	}
	if err := valgrind.Control(ctx, spec.Control, vgdbPrefix, "-d", pid); err != nil {
		return sample, err
	}
	logTo := fileSize(logPath)
	m2, err := readAllocCounters(ctx, client)
	if err != nil {
		return sample, fmt.Errorf("server %s: %w", spec.Side, err)
	}
	if !proc.Alive() {
		return sample, fmt.Errorf("server %s died under callgrind%s%s", spec.Side, proc.LastLine(), valgrind.Cause(logPath))
	}
	_ = proc.Kill()

	prof, err := readDump(outPrefix, pid)
	if err != nil {
		return sample, err
	}
	n := res.Answered
	sample.Requests = n
	sample.Unfiltered = prof.Instructions()
	kept, _ := callgrind.KeptFunctions(prof)
	for _, v := range kept {
		sample.Instructions += v
	}
	sample.Functions = callgrind.PerRequest(kept, n)
	sample.InstructionsPerRequest = float64(sample.Instructions) / float64(n)
	sample.UnfilteredPerRequest = float64(sample.Unfiltered) / float64(n)
	over := m1.minus(m0)
	used := m2.minus(m1).minus(over)
	sample.AllocsPerRequest = max(used.mallocs, 0) / float64(n)
	sample.BytesPerRequest = max(used.bytes, 0) / float64(n)
	if calls, err := valgrind.TracedSyscalls(logPath, logFrom, logTo); err == nil {
		sample.Syscalls = calls
		total := 0
		for _, c := range calls {
			total += c
		}
		sample.SyscallsPerRequest = float64(total) / float64(n)
	}
	sample.WallS = time.Since(began).Seconds()
	return sample, nil
}

// cleanCostRun: every due request answered, none failed. A count over
// fewer requests than asked, or over failures, is not comparable.
func cleanCostRun(res loadresult.Result) error {
	if res.Errors > 0 || res.Unfinished > 0 || res.Dropped > 0 || res.Answered < res.Due {
		return fmt.Errorf("%d due, %d answered, %d errors, %d unfinished, %d dropped%s",
			res.Due, res.Answered, res.Errors, res.Unfinished, res.Dropped, launch.StatusNote(res))
	}
	if res.Answered == 0 {
		return errors.New("no request answered")
	}
	return nil
}

// readDump reads the one dump the run made (part 1 of the process's file).
func readDump(prefix string, pid int) (*callgrind.Profile, error) {
	path := fmt.Sprintf("%s.%d.1", prefix, pid)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("callgrind dump: %w", err)
	}
	defer f.Close()
	return callgrind.Parse(f)
}

func unixHTTPClient(path string) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}}}
}

type allocCounters struct{ mallocs, bytes float64 }

func (a allocCounters) minus(b allocCounters) allocCounters {
	return allocCounters{a.mallocs - b.mallocs, a.bytes - b.bytes}
}

// readAllocCounters reads the Go runtime's allocation counters from the
// server's /metrics.
func readAllocCounters(ctx context.Context, c *http.Client) (allocCounters, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://server/metrics", nil)
	if err != nil {
		return allocCounters{}, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return allocCounters{}, fmt.Errorf("reading /metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return allocCounters{}, fmt.Errorf("reading /metrics: status %d", resp.StatusCode)
	}
	return parseAllocCounters(resp.Body)
}

// parseAllocCounters finds the two counters in Prometheus's text format.
func parseAllocCounters(r io.Reader) (allocCounters, error) {
	var a allocCounters
	found := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		var dst *float64
		switch name {
		case "go_memstats_mallocs_total":
			dst = &a.mallocs
		case "go_memstats_alloc_bytes_total":
			dst = &a.bytes
		default:
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return a, fmt.Errorf("/metrics %s: %w", name, err)
		}
		*dst = v
		found++
	}
	if err := sc.Err(); err != nil {
		return a, fmt.Errorf("reading /metrics: %w", err)
	}
	if found < 2 {
		return a, errors.New("/metrics has no go_memstats_mallocs_total or go_memstats_alloc_bytes_total")
	}
	return a, nil
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
