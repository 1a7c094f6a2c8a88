package reports

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"weaseldb/artifacts"
	"weaseldb/internal/affinity"
	"weaseldb/plan"
)

// printedThread is one line of bench_pipeline --print-plan:
// "stage 0 cpu=12 core=12 node=1 idle=13".
type printedThread struct {
	name            string
	cpu, core, node int
}

// parsePrintedPlan reads the thread lines of a printed plan; the lines
// after them (gave up, warnings, a flat topology) are not threads.
func parsePrintedPlan(text string) ([]printedThread, error) {
	var out []printedThread
	for _, line := range strings.Split(text, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), " cpu=")
		if !ok {
			continue
		}
		th := printedThread{name: name}
		fields := map[string]*int{"cpu": &th.cpu, "core": &th.core, "node": &th.node}
		for _, f := range strings.Fields("cpu=" + rest) {
			k, v, _ := strings.Cut(f, "=")
			if dst, ok := fields[k]; ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					return nil, fmt.Errorf("%q: %s is not a number: %w", line, k, err)
				}
				*dst = n
				delete(fields, k)
			}
		}
		if len(fields) > 0 {
			return nil, fmt.Errorf("%q: no cpu=, core= and node= all three", line)
		}
		out = append(out, th)
	}
	if len(out) == 0 {
		return nil, errors.New("no thread lines (NAME cpu=N core=N node=N)")
	}
	return out, nil
}

// readPrintedPlan reads the run's printed plan once; ok false when the run
// has none (a run not from the many-CPU guest).
func (c *checker) readPrintedPlan() (threads []printedThread, ok bool, err error) {
	if c.printed == nil {
		data, err := os.ReadFile(filepath.Join(c.r.Dir, artifacts.PrintPlanFile))
		c.printed = &printedPlan{}
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			c.printed.ok, c.printed.err = true, err
		default:
			c.printed.ok = true
			c.printed.threads, c.printed.err = parsePrintedPlan(string(data))
		}
	}
	return c.printed.threads, c.printed.ok, c.printed.err
}

type printedPlan struct {
	threads []printedThread
	ok      bool
	err     error
}

// printedPlan checks a dedicated bench_pipeline run against the printed
// plan: every printed thread was read back on its CPU, nothing else was
// pinned, and the printed core and node are the recorded topology's. A
// run without a printed plan is held to it only under RequireDedicated
// (the guest prints one before every run).
func (c *checker) printedPlan(subject string, res PinningResult, ws *artifacts.WaitStrategies) {
	printed, ok, err := c.readPrintedPlan()
	if !ok {
		if c.o.RequireDedicated {
			c.add(subject, artifacts.CheckPrintedPlan, false, artifacts.PrintPlanFile, "no printed plan (bench_pipeline --cpus auto --print-plan) in the run directory")
		}
		return
	}
	if err != nil {
		c.add(subject, artifacts.CheckPrintedPlan, false, artifacts.PrintPlanFile, "%v", err)
		return
	}
	allowed, _ := affinity.ParseCPUList(ws.AllowedCPUs)
	topo := plan.TopologyOf(ws.Topology, allowed)
	ran := map[string]int{} // role -> CPU read back
	for _, th := range res.Pinned {
		ran[th.Role] = th.CPU
	}
	var problems, lines []string
	for _, p := range printed {
		lines = append(lines, fmt.Sprintf("%s cpu=%d", p.name, p.cpu))
		cpu, found := ran[p.name]
		switch {
		case !found:
			problems = append(problems, fmt.Sprintf("no %s thread read back (printed on CPU %d)", p.name, p.cpu))
		case cpu != p.cpu:
			problems = append(problems, fmt.Sprintf("%s printed on CPU %d, ran pinned to CPU %d", p.name, p.cpu, cpu))
		}
		if place, in := topo.Place(p.cpu); !in || place.Core != p.core || place.Node != p.node {
			problems = append(problems, fmt.Sprintf("%s printed as core %d node %d; the recorded topology puts CPU %d on core %d node %d",
				p.name, p.core, p.node, p.cpu, place.Core, place.Node))
		}
		delete(ran, p.name)
	}
	for _, role := range slices.Sorted(maps.Keys(ran)) {
		problems = append(problems, fmt.Sprintf("%s ran pinned to CPU %d, not in the printed plan", role, ran[role]))
	}
	detail := fmt.Sprintf("printed %s; read back under load: the same", strings.Join(lines, ", "))
	if len(problems) > 0 {
		detail = strings.Join(problems, "; ")
	}
	c.add(subject, artifacts.CheckPrintedPlan, len(problems) == 0, artifacts.PrintPlanFile, "%s", detail)
}
