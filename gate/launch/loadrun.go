package launch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"weaseldb/gate/result"
	"weaseldb/internal/loadrun"
	loadresult "weaseldb/loadtester/result"
)

// LoadSpec is one load_tester invocation.
type LoadSpec struct {
	Binary      string
	Target      Target
	Duration    time.Duration
	Warmup      time.Duration
	Concurrency int
	Threads     int
	CPUs        []int // run load_tester on these CPUs only (empty: unpinned)
	Path        string
	Extra       []string // more flags, passed as given
	JSONPath    string
	// Scenario and Phase say what the run is for (the result's file name,
	// and the tests' synthetic lab); neither reaches load_tester.
	Scenario string
	Phase    string // PhaseSetup, PhaseWarmup or PhaseMeasured
}

// Phases of a load run.
const (
	PhaseSetup    = "setup"    // a scenario's setup load, unmeasured
	PhaseWarmup   = "warm-up"  // the discarded run of a freshly started server
	PhaseMeasured = "measured" // a sample
)

// Args is the load_tester command line without the binary and --json
// (which loadrun adds: loadrun.Spec.Argv).
func (l LoadSpec) Args() []string {
	args := append([]string{}, l.Target.LoadArgs()...)
	args = append(args,
		"--duration", seconds(l.Duration),
		"--warmup", seconds(l.Warmup),
		"--concurrency", strconv.Itoa(l.Concurrency),
		"--network-threads", strconv.Itoa(l.Threads),
		"--path", l.Path,
		"--quiet",
	)
	return append(args, l.Extra...)
}

// seconds formats a duration as load_tester's seconds argument ("1.5s").
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// RunLoad runs load_tester once (internal/loadrun) and returns its result.
// An error is one line (load_tester's last line of output). When
// load_tester exited non-zero but wrote its result, both come back, the
// error a *loadrun.ExitError, so the caller can say what was wrong with
// the run; any other error means no result. A cancelled ctx stops
// load_tester with SIGINT and returns loadrun.ErrInterrupted.
func RunLoad(ctx context.Context, l LoadSpec) (loadresult.Result, error) {
	// Generous: start-up, connect timeout, the drain and the JSON write on a loaded machine.
	limit := l.Warmup + l.Duration + 30*time.Second
	res, err := loadrun.Run(ctx, loadrun.Spec{
		Command:  loadrun.Command{Binary: l.Binary, Args: l.Args(), CPUs: l.CPUs, Timeout: limit},
		JSONPath: l.JSONPath,
	})
	var exit *loadrun.ExitError
	switch {
	case errors.As(err, &exit) && res == nil:
		// It wrote no result: no run to judge, only why it failed.
		return loadresult.Result{}, fmt.Errorf("load_tester: %w%s", exit.Err, exit.LastLine)
	case exit != nil:
		return *res, exit
	case err != nil:
		return loadresult.Result{}, err
	case res.RequestsPerSec <= 0 && res.Errors == 0:
		return *res, errors.New("load_tester measured no requests")
	}
	return *res, nil
}

// ShapeArgs are the load_tester flags of the shape (the path and the
// connections are LoadSpec's own).
func ShapeArgs(l result.LoadShape) []string {
	var out []string
	if l.Method != "" && l.Method != "GET" {
		out = append(out, "--method", l.Method)
	}
	for _, h := range l.Headers {
		out = append(out, "--header", h)
	}
	if l.Body != "" {
		out = append(out, "--body", l.Body)
	}
	if l.Pipeline > 1 {
		out = append(out, "--pipeline", strconv.Itoa(l.Pipeline))
	}
	if l.Rate > 0 {
		out = append(out, "--rate", strconv.FormatFloat(l.Rate, 'f', -1, 64))
	}
	return append(out, l.LoadArgs...)
}

// StatusNote names the non-2xx answers among a run's errors (" (status
// 400: 12)"), which tell a scenario whose requests the server refuses
// (a body it rejects, an id too short) from a failing server.
func StatusNote(res loadresult.Result) string {
	var parts []string
	for code, n := range res.StatusCodes {
		if !strings.HasPrefix(code, "2") && n > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", code, n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	slices.Sort(parts)
	return " (status " + strings.Join(parts, ", ") + ")"
}
