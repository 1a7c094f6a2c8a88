// Command gate is the CI regression gate on requests/sec. It compares two
// server builds in one interleaved run (A/B mode) or one build with a
// recorded baseline, and exits 0 (pass), 1 (regression) or 2 (could not
// judge), with a one-line reason. See docs/gate.md.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"weaseldb/gate"
	"weaseldb/gate/render"
	"weaseldb/gate/result"
	"weaseldb/internal/cliflag"
	"weaseldb/internal/progress"
	"weaseldb/internal/serverproc"
)

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "record":
			return recordCommand(args[1:], stdout, stderr)
		case "history":
			return historyCommand(args[1:], stdout, stderr)
		}
	}
	o := gate.DefaultOptions()
	o.B = besideMe("weaseldb", o.B)
	o.LoadTester = besideMe("load_tester", o.LoadTester)
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: gate [flags]
  A/B:       gate --a OLD_BINARY [--b NEW_BINARY]   or   gate --a-ref GIT_REF [--b NEW_BINARY]
  baseline:  gate [--b BINARY] [--baseline FILE]    (write one with --update-baseline)
  scenarios: gate --scenarios FILE --a OLD [--b NEW]  (every hot path of the file, one verdict each; the worst decides)
  history:   gate record HISTORY GATE_JSON   then   gate history HISTORY   (change points over main's results)
Exit status: 0 pass, 1 regression, 2 could not judge (the reason is printed).
`)
		fs.PrintDefaults()
	}
	var loadArgs stringList
	var jsonPath, markdownPath, scenarios string
	var quiet, printConfig bool
	var tiers string
	fs.StringVar(&o.A, "a", "", "server binary A, the reference (A/B mode)")
	fs.StringVar(&o.ARef, "a-ref", "", "build A from this git ref in a temporary worktree (A/B mode)")
	fs.StringVar(&o.B, "b", o.B, "server binary B, the candidate")
	fs.StringVar(&o.RefPackage, "ref-package", o.RefPackage, "package built at --a-ref")
	fs.StringVar(&o.Config, "config", "", "server config for both sides (interfaces are replaced); default: built in")
	fs.StringVar(&o.AConfig, "a-config", "", "config for A only (experiments)")
	fs.StringVar(&o.BConfig, "b-config", "", "config for B only (experiments, e.g. a deliberately slowed B)")
	fs.StringVar(&o.LoadTester, "load-tester", o.LoadTester, "load_tester binary")
	fs.StringVar(&o.Network, "network", o.Network, "unix or tcp")
	fs.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds (one run per side, interleaved A B, B A, ...) before the first look at the verdict")
	fs.IntVar(&o.MaxRounds, "max-rounds", o.MaxRounds, "while undecided, add rounds two at a time up to this many (0: exactly --rounds)")
	fs.DurationVar(&o.Budget, "budget", o.Budget, "measuring time allowed: no rounds are added that would end past it (0: no limit; an --a-ref build is not counted)")
	fs.DurationVar(&o.Duration, "duration", o.Duration, "measured time of one run")
	fs.DurationVar(&o.Warmup, "warmup", o.Warmup, "load_tester --warmup of each run (excluded)")
	fs.DurationVar(&o.WarmupRun, "warmup-run", o.WarmupRun, "one discarded run per server after it starts")
	fs.IntVar(&o.Concurrency, "concurrency", o.Concurrency, "load_tester connections")
	fs.IntVar(&o.Threads, "threads", o.Threads, "load_tester network threads; 0: one per load tester CPU (at most 4) when pinned, else 2")
	fs.StringVar(&o.Pin, "pin", o.Pin, "CPUs for the servers and the load tester: auto (half each; off below 2 CPUs), off, or SERVER:CLIENT lists such as 0-3:4-7")
	fs.StringVar(&o.Path, "path", o.Path, "request path (one workload; with --scenarios each scenario has its own)")
	fs.Func("only", "with --scenarios: run only these scenarios (comma-separated names; repeatable)", func(v string) error {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				o.Only = append(o.Only, name)
			}
		}
		return nil
	})
	fs.StringVar(&scenarios, "scenarios", "", "TOML file of named load shapes, each judged with its own interval; its [gate] table sets the flags not given (testdata/gate_scenarios.toml)")
	fs.StringVar(&o.Order, "order", o.Order, "how A and B take turns: random (each pair of rounds runs A B and B A, which first drawn from --order-seed) or alternate (A B, B A, ...)")
	fs.Uint64Var(&o.OrderSeed, "order-seed", 0, "seed of the random order (0: drawn, and recorded in the JSON's rounds_plan)")
	fs.BoolVar(&o.RestartEachRound, "restart", o.RestartEachRound, "start fresh servers every round; --restart=false keeps one pair for the whole run (see docs/gate.md)")
	fs.Var(&loadArgs, "load-arg", "extra load_tester flag (repeatable), e.g. --load-arg=--pipeline --load-arg=16")
	fs.StringVar(&o.ReadyLine, "ready-line", o.ReadyLine, "stdout line that says the server accepts")
	fs.DurationVar(&o.StartTimeout, "start-timeout", o.StartTimeout, "wait this long for the ready line")
	fs.Float64Var(&o.Tolerance, "tolerance", o.Tolerance, "fraction of req/s B may lose (0.05 = 5%); a pass also needs the interval above 1 - 2 x tolerance")
	fs.Float64Var(&o.Level, "level", o.Level, "confidence level of the ratio's interval")
	fs.BoolVar(&o.NoiseOK, "noise-ok", false, "exit 0 instead of 2 when the only problem is noise or a client-bound load tester (CI smoke runs)")
	fs.BoolVar(&o.AllowClientBound, "allow-client-bound", false, "judge even when the load tester was the bottleneck")
	fs.StringVar(&o.BaselineFile, "baseline", o.BaselineFile, "baseline file (baseline mode)")
	fs.BoolVar(&o.UpdateBaseline, "update-baseline", false, "measure --b and write the baseline file")
	fs.BoolVar(&o.AllowOtherMachine, "allow-other-machine", false, "compare with a baseline recorded on another machine")
	fs.StringVar(&tiers, "tiers", "", "with --scenarios: what to judge, time (req/s), cost (instructions per request under callgrind) or time,cost; default time,cost where valgrind is installed, else time")
	fs.IntVar(&o.Cost.Requests, "cost-requests", o.Cost.Requests, "cost tier: requests counted per run, after the scenario's setup")
	fs.Float64Var(&o.Cost.Rate, "cost-rate", o.Cost.Rate, "cost tier: their open-loop rate (requests/s), the same on both sides")
	fs.IntVar(&o.Cost.Runs, "cost-runs", o.Cost.Runs, "cost tier: runs per side (A and B at once) before the first look")
	fs.IntVar(&o.Cost.MaxRuns, "cost-max-runs", o.Cost.MaxRuns, "cost tier: runs per side at most while undecided")
	fs.Float64Var(&o.Cost.Tolerance, "cost-tolerance", o.Cost.Tolerance, "cost tier: extra instructions per request B may have (0.005 = 0.5%)")
	fs.Float64Var(&o.Cost.MaxSpread, "cost-max-spread", o.Cost.MaxSpread, "cost tier: a side whose runs disagree by more (max/min - 1) cannot be judged")
	fs.StringVar(&o.Cost.KeepDir, "cost-keep", "", "cost tier: keep every run's files (callgrind dumps for callgrind_annotate, valgrind logs, load results) in `DIR`")
	fs.StringVar(&o.Cost.Godebug, "cost-godebug", "", "cost tier: more GODEBUG settings for the servers under valgrind, a comma-separated `LIST` such as cpu.avx2=off (the gate already turns off the CPU features valgrind cannot execute here)")
	fs.StringVar(&o.Cost.Valgrind, "valgrind", "", "cost tier: the valgrind binary (default: from $PATH)")
	fs.StringVar(&jsonPath, "json", "", "write the result as JSON to this file")
	fs.StringVar(&markdownPath, "markdown", "", "write a short markdown summary to this file (a pull-request comment, $GITHUB_STEP_SUMMARY)")
	fs.BoolVar(&quiet, "quiet", false, "no progress lines")
	fs.BoolVar(&printConfig, "print-default-config", false, "print the built-in server config and exit")
	if err := cliflag.Parse(fs, args); err != nil {
		return flagExit(err, stderr, "gate")
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gate: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if printConfig {
		stdout.Write(gate.DefaultConfig())
		return 0
	}
	o.LoadArgs = loadArgs
	o.Command = "gate " + strings.Join(args, " ")

	ctx, stop := serverproc.SupervisorContext()
	defer stop()
	// On a terminal the progress lines become one line rewritten in place
	// with the time run (how long is left is not known ahead: the gate adds
	// rounds and runs while a scenario is undecided); cleared before the
	// verdict.
	line := progress.For(stderr)
	var lines io.Writer = line
	if quiet {
		lines = nil
	}
	links := render.MarkdownLinks{JSONPath: jsonPath, RunURL: ciRunURL()}
	if len(o.Only) > 0 && scenarios == "" {
		fmt.Fprintln(stderr, "gate: --only names scenarios of a --scenarios file")
		return 2
	}
	if tiers != "" && scenarios == "" {
		fmt.Fprintln(stderr, "gate: --tiers judges the scenarios of a --scenarios file")
		return 2
	}
	if scenarios != "" {
		var err error
		if o.Tiers, err = gate.ParseTiers(tiers); tiers == "" {
			o.Tiers = gate.DefaultTiers(o.Cost.Valgrind)
		} else if err != nil {
			fmt.Fprintf(stderr, "gate: %v\n", err)
			return 2
		}
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		r := gate.RunScenarios(ctx, o, scenarios, func(name string) bool { return set[name] }, lines)
		line.Done()
		return report(stdout, stderr, r, jsonPath, markdownPath, links)
	}
	r := gate.Run(ctx, o, lines)
	line.Done()
	return report(stdout, stderr, r, jsonPath, markdownPath, links)
}

// report prints the result's table and writes the JSON and markdown files
// asked for; a file that cannot be written turns the exit status into 2.
func report(stdout, stderr io.Writer, r *result.Result, jsonPath, markdownPath string, links render.MarkdownLinks) int {
	render.WriteTable(stdout, r)
	for _, out := range []struct {
		path  string
		write func() error
	}{
		{jsonPath, func() error { return render.WriteJSON(jsonPath, r) }},
		{markdownPath, func() error { return render.WriteMarkdownFile(markdownPath, r, links) }},
	} {
		if out.path == "" {
			continue
		}
		if err := out.write(); err != nil {
			fmt.Fprintf(stderr, "gate: %v\n", err)
			return 2
		}
	}
	return r.ExitCode
}

// ciRunURL is the page of the current GitHub or Gitea Actions run (where
// its artifacts are), from the variables both set; "" elsewhere.
func ciRunURL() string {
	server, repo, id := os.Getenv("GITHUB_SERVER_URL"), os.Getenv("GITHUB_REPOSITORY"), os.Getenv("GITHUB_RUN_ID")
	if server == "" || repo == "" || id == "" {
		return ""
	}
	return strings.TrimSuffix(server, "/") + "/" + repo + "/actions/runs/" + id
}

// besideMe prefers a binary next to the gate's own executable (build/), so
// `build/gate` works from any directory; otherwise the default path.
func besideMe(name, fallback string) string {
	exe, err := os.Executable()
	if err != nil {
		return fallback
	}
	p := filepath.Join(filepath.Dir(exe), name)
	if st, err := os.Stat(p); err != nil || st.IsDir() {
		return fallback
	}
	// Relative to the working directory when below it: the path is recorded
	// in baselines, which should not name one checkout's location.
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return p
}
