package gate

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"time"

	"weaseldb/gate/cost"
	"weaseldb/gate/result"
)

//go:embed default_config.toml
var defaultConfig []byte

// DefaultConfig is the server config used when --config is not given.
func DefaultConfig() []byte { return append([]byte(nil), defaultConfig...) }

// Options configure one gate run. The zero value is not useful: start from
// DefaultOptions.
type Options struct {
	// A/B mode when A or ARef is set; baseline mode otherwise.
	A    string // server binary A (the reference)
	ARef string // or: build A from this git ref in a temporary worktree
	B    string // server binary B (the candidate)

	RefPackage string // what to build at ARef, e.g. "./cmd/weaseldb"

	Config  string // server config file; "" = the built-in default
	AConfig string // per-side override (for experiments such as a slowed B)
	BConfig string

	LoadTester string
	Network    string // "unix" or "tcp"
	// Rounds is how many rounds (one run per side each) are measured before
	// the first look at the verdict; while it is undecided, rounds are added
	// two at a time (one of each order) up to MaxRounds, unless the next two
	// would end past Budget.
	Rounds      int
	MaxRounds   int
	Budget      time.Duration // the measuring time allowed (0: no limit); the --a-ref build is not counted
	Duration    time.Duration // measured part of one run
	Warmup      time.Duration // load_tester --warmup of each run, excluded
	WarmupRun   time.Duration // one discarded run per server after it starts
	Concurrency int
	Threads     int // load_tester network threads; 0: one per load tester CPU (at most 4) when pinned, else 2
	// Pin places the server and the load tester on CPUs of their own:
	// "auto", "off" or "SERVER_CPUS:CLIENT_CPUS" (PlanCPUs).
	Pin      string
	Path     string
	LoadArgs []string
	// RestartEachRound starts fresh servers every round (in the round's
	// order) instead of keeping them for the whole run. On by default: in
	// A/A validation, one long-lived server process could stay 10-15%
	// faster than its identical twin for many rounds (thread placement,
	// heap layout), a bias that fresh processes per round turn into noise
	// the median averages out.
	RestartEachRound bool
	ReadyLine        string
	StartTimeout     time.Duration

	Tolerance float64
	Level     float64 // confidence level of the ratio's interval
	NoiseOK   bool

	// A side whose runs are client bound in more than this fraction cannot
	// be judged: the load tester, not the server, set the pace.
	MaxClientBoundFraction float64
	AllowClientBound       bool

	BaselineFile      string
	UpdateBaseline    bool
	AllowOtherMachine bool

	Command string // the gate's command line, recorded in results and baselines

	// Only names the scenarios of the --scenarios file to run (empty: all),
	// to rerun one that failed, or to measure the gate's power on one.
	Only []string

	// Order is how A and B take turns within the rounds: OrderRandom (the
	// default: each pair of rounds runs A B and B A once, in an order
	// drawn from OrderSeed, as randomized multiple interleaved trials do,
	// so that no periodic disturbance lines up with one side), or
	// OrderAlternate (A B, B A, A B, ...).
	Order     string
	OrderSeed uint64 // 0: drawn when the run starts (the result records it)

	// Tiers are what a scenarios run judges: TierTime (req/s, the rounds
	// above) and TierCost (instructions per request under callgrind).
	// Empty: TierTime alone.
	Tiers []string
	// Cost configures the cost tier.
	Cost cost.Options

	// aLabel names A when it was built from ARef before the tiers ran.
	aLabel string

	// interimLevel overrides InterimLevel (tests compare schemes with it).
	interimLevel float64
}

// DefaultOptions are the defaults `gate` runs with. Why these numbers:
// docs/gate.md ("How it decides, and why": Defaults, Pinning). In short:
// 10 interleaved rounds of 1.25 s (0.25 s warm-up + 1 s measured) per side
// to start, up to 20 while undecided (about 53 s, inside a 60 s budget);
// short runs keep each A/B pair close in time, so a burst from another
// process hits both halves of a pair and cancels in the ratio. The 5%
// tolerance with a pass needing the interval above 0.90 aims at catching
// a 10% slowdown.
func DefaultOptions() Options {
	return Options{
		B:                      "build/weaseldb",
		RefPackage:             "./cmd/weaseldb",
		LoadTester:             "build/load_tester",
		Network:                "unix",
		Rounds:                 10,
		MaxRounds:              20,
		Budget:                 60 * time.Second,
		Duration:               time.Second,
		Warmup:                 250 * time.Millisecond,
		WarmupRun:              time.Second,
		Concurrency:            64,
		Threads:                0,
		Pin:                    "auto",
		RestartEachRound:       true,
		Path:                   "/ok",
		ReadyLine:              "weaseldb: ready",
		StartTimeout:           15 * time.Second,
		Tolerance:              0.05,
		Level:                  0.95,
		MaxClientBoundFraction: 0.5,
		BaselineFile:           "testdata/baseline.json",
		Cost:                   cost.DefaultOptions(),
		Order:                  OrderRandom,
	}
}

// The round orders.
const (
	OrderRandom    = "random"
	OrderAlternate = "alternate"
)

// swapped reports whether round (1, 2, ...) runs B before A. Rounds come
// in pairs, one of each order, so the two orders stay balanced; which
// comes first in a pair is a coin drawn from OrderSeed and the pair.
func (o Options) swapped(round int) bool {
	first := round%2 == 1
	if o.Order == OrderAlternate {
		return !first
	}
	pair := uint64((round + 1) / 2)
	bOpens := rand.New(rand.NewPCG(o.OrderSeed, pair)).IntN(2) == 1
	return bOpens == first
}

// drawOrderSeed draws the random order's seed when none was given.
func (o *Options) drawOrderSeed() {
	if o.Order != OrderAlternate && o.OrderSeed == 0 {
		o.OrderSeed = rand.Uint64() | 1
	}
}

// roundsPlan is what the options allow the rounds.
func (o Options) roundsPlan() result.RoundsPlan {
	p := result.RoundsPlan{Initial: o.Rounds, Max: o.maxRounds(), BudgetS: o.Budget.Seconds(), Order: cmp.Or(o.Order, OrderRandom)}
	if p.Order == OrderRandom {
		p.OrderSeed = o.OrderSeed
	}
	return p
}

// ParseTiers reads --tiers: a comma-separated list of time and cost.
func ParseTiers(list string) ([]string, error) {
	var out []string
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimSpace(t)
		switch t {
		case result.TierTime, result.TierCost:
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		case "":
		default:
			return nil, fmt.Errorf("--tiers %q: unknown tier %q (want time, cost or time,cost)", list, t)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--tiers %q: name at least one of time, cost", list)
	}
	return out, nil
}

// DefaultTiers are the tiers a scenarios run judges when --tiers is not
// given: time and cost where valgrind is installed, else time alone.
func DefaultTiers(valgrind string) []string {
	if valgrind == "" {
		valgrind = "valgrind"
	}
	if _, err := exec.LookPath(valgrind); err != nil {
		return []string{result.TierTime}
	}
	return []string{result.TierTime, result.TierCost}
}

// tierNames are the tiers the run judges, as the JSON lists them.
func (o Options) tierNames() []string {
	if len(o.Tiers) == 0 {
		return []string{result.TierTime}
	}
	return append([]string(nil), o.Tiers...)
}

// hasTier reports whether the run judges tier (no tiers: the time tier).
func (o Options) hasTier(tier string) bool {
	if len(o.Tiers) == 0 {
		return tier == result.TierTime
	}
	return slices.Contains(o.Tiers, tier)
}

// ABMode reports whether two servers are compared in one run.
func (o Options) ABMode() bool { return o.A != "" || o.ARef != "" }

// Validate checks the options; its error is one line.
func (o Options) Validate() error {
	switch {
	case o.A != "" && o.ARef != "":
		return errors.New("give --a or --a-ref, not both")
	case o.B == "":
		return errors.New("--b (the server binary) is required")
	case o.UpdateBaseline && o.ABMode():
		return errors.New("--update-baseline measures one server: drop --a/--a-ref")
	case o.Network != "unix" && o.Network != "tcp":
		return fmt.Errorf("--network %q: want unix or tcp", o.Network)
	case o.Rounds < 3:
		return fmt.Errorf("--rounds %d: at least 3 are needed (6 for a finite 95%% interval)", o.Rounds)
	case o.MaxRounds != 0 && o.MaxRounds < o.Rounds:
		return fmt.Errorf("--max-rounds %d: want at least --rounds (%d), or 0 for --rounds exactly", o.MaxRounds, o.Rounds)
	case o.Budget < 0:
		return errors.New("--budget must not be negative (0: no limit)")
	case o.Duration <= 0 || o.Warmup < 0 || o.WarmupRun < 0:
		return errors.New("--duration must be positive, --warmup and --warmup-run not negative")
	case o.Concurrency < 1 || o.Threads < 0:
		return errors.New("--concurrency must be at least 1 and --threads not negative")
	case !(o.Tolerance > 0 && o.Tolerance < 1):
		return fmt.Errorf("--tolerance %v: want a fraction between 0 and 1 (0.10 = 10%%)", o.Tolerance)
	case !(o.Level > 0.5 && o.Level < 1):
		return fmt.Errorf("--level %v: want a confidence level between 0.5 and 1", o.Level)
	case o.StartTimeout <= 0:
		return errors.New("--start-timeout must be positive")
	case o.Order != "" && o.Order != OrderRandom && o.Order != OrderAlternate:
		return fmt.Errorf("--order %q: want %s or %s", o.Order, OrderRandom, OrderAlternate)
	}
	return nil
}

// maxRounds is the cap on rounds: MaxRounds, or Rounds when it is 0.
func (o Options) maxRounds() int { return max(o.MaxRounds, o.Rounds) }
