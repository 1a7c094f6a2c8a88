package artifacts

// ChecksFile is the run directory's functional checks (`report check`).
const ChecksFile = "checks.json"

// ChecksVersion is the version of checks.json.
const ChecksVersion = 1

// Checks is checks.json: what a run did, checked against what it planned,
// one line per thing a reader would otherwise take on faith. Every check is
// about behaviour (what ran, where, whether it finished and was answered),
// never about speed, so it holds on an emulated machine as on real cores.
type Checks struct {
	Version int     `json:"version"`
	Passed  bool    `json:"passed"`
	Total   int     `json:"total"`
	Failed  int     `json:"failed"`
	Summary string  `json:"summary"`
	CPUs    int     `json:"cpus,omitempty"` // the CPUs the run was to have (0: not checked)
	Checks  []Check `json:"checks"`
}

// Check is one check of one run.
type Check struct {
	Subject  string `json:"subject"` // "machine", "wait-strategies server Never dedicated", "setups fitted round 1"
	Check    string `json:"check"`   // one of the Check* names
	OK       bool   `json:"ok"`
	Detail   string `json:"detail"`
	Artifact string `json:"artifact,omitempty"` // the file the check read
	// Advisory: what was found is reported, but the run is not held to it
	// (OK stays true); Detail says why.
	Advisory bool `json:"advisory,omitempty"`
}

// The checks, by name.
const (
	CheckCPUs        = "cpus"         // the machine had the CPUs asked for
	CheckStatus      = "status"       // the run was measured (not skipped, not failed) and its server stopped cleanly
	CheckPlan        = "plan"         // the CPUs it was given are what the planner (package plan) gives for that set
	CheckPinning     = "pinning"      // every thread where the plan put it (reports.VerifyPinning)
	CheckLoops       = "loops"        // every event loop accepted and served (reports.VerifyLoops)
	CheckGOMAXPROCS  = "gomaxprocs"   // the server's GOMAXPROCS is the planned one (reports.PlannedGOMAXPROCS)
	CheckAccounting  = "accounting"   // every due request answered: none failed, unfinished or dropped
	CheckIdle        = "idle"         // with nothing to do, a parking strategy parks and Never spins
	CheckStageSleeps = "stage-sleeps" // with nothing to do, a pinned stage thread does not keep sleeping and waking (reports.VerifyIdleSleeps)
	CheckCalibration = "calibration"  // bench_cpu_work ran
	// CheckSharedCore: no two threads the plan dedicates share a physical
	// core (their CPUs read back from /proc, mapped by the run's topology).
	CheckSharedCore = "no-shared-physical-core"
	// CheckOneNode: a server's loops and stages (or a benchmark's producer
	// and stages) ran on one NUMA node, unless no node had room for them.
	CheckOneNode = "one-node-per-pipeline"
	// CheckPrintedPlan: the plan bench_pipeline --cpus auto --print-plan
	// printed before the runs (PrintPlanFile) is where a dedicated
	// benchmark run's threads ran, read back from /proc under load, on the
	// cores and nodes the run's recorded topology gives those CPUs.
	CheckPrintedPlan = "printed-plan"
)

// PrintPlanFile is bench_pipeline --cpus auto --print-plan's output, kept
// in the run directory by the many-CPU guest.
const PrintPlanFile = "print_plan.log"

// FailedChecks lists the failed checks.
func (cs *Checks) FailedChecks() []Check {
	var out []Check
	for _, c := range cs.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}
