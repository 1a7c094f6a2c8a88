package gate

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"weaseldb/gate/cost"
	"weaseldb/gate/result"
	"weaseldb/gate/verdict"
)

// The two tiers of one gate run, on the same two binaries: the time tier's
// rounds (rounds.go) and then the cost tier (gate/cost), which this file
// hands the scenarios, the binaries and their configs.

// runTiers runs the time tier (the rounds) and then the cost tier on the
// same two binaries; A is built from --a-ref once, for both.
func runTiers(ctx context.Context, m *measurement, l lab, cl cost.Lab, settings *result.Settings, machine *result.Machine, progress io.Writer) []*result.CostJudgement {
	o := &m.o
	if !o.hasTier(result.TierCost) {
		m.run(ctx, settings, machine)
		return nil
	}
	dir, err := os.MkdirTemp("", "gate-cost-")
	if err != nil {
		m.failEarly(verdict.ReasonBadInput, "temp dir: %v", err)
		return nil
	}
	defer os.RemoveAll(dir)
	costDir := dir
	if o.Cost.KeepDir != "" {
		if costDir, err = filepath.Abs(o.Cost.KeepDir); err == nil {
			err = os.MkdirAll(costDir, 0o755)
		}
		if err != nil {
			m.failEarly(verdict.ReasonBadInput, "--cost-keep: %v", err)
			return nil
		}
	}
	if o.ARef != "" {
		bin := filepath.Join(dir, "weaseldb-"+sanitize(o.ARef))
		m.logf(nil, "building %s at %s", o.RefPackage, o.ARef)
		commit, err := BuildRef(ctx, o.ARef, o.RefPackage, bin)
		if err != nil {
			m.failEarly(verdict.ReasonBadInput, "%v", err)
			return nil
		}
		o.aLabel = fmt.Sprintf("%s at %s (%s)", o.RefPackage, o.ARef, result.ShortHash(commit))
		o.A, o.ARef = bin, ""
	}
	if o.hasTier(result.TierTime) {
		m.run(ctx, settings, machine)
	} else {
		*machine = ThisMachine(o.B)
		for _, sc := range m.scenarios {
			sc.sides = []*sideRun{{name: "A", label: cmp.Or(o.aLabel, o.A)}, {name: "B", label: o.B}}
		}
	}
	cfgA, cfgB, err := m.configs()
	if err != nil {
		m.failEarly(verdict.ReasonBadInput, "%v", err)
		return nil
	}
	scs := make([]cost.Scenario, len(m.scenarios))
	for i, sc := range m.scenarios {
		scs[i] = sc.sc.costScenario()
	}
	pair := cost.Pair{BinA: o.A, BinB: o.B, CfgA: cfgA, CfgB: cfgB, LoadTester: o.LoadTester, Dir: costDir}
	costs := cost.RunTier(ctx, o.Cost, scs, pair, cl, progress)
	for _, c := range costs {
		if o.NoiseOK && c.Verdict == result.CostCouldNotJudge && c.Decision().ReasonCode == verdict.ReasonCostNoisy {
			c.Verdict, c.NoiseForgiven = result.CostPass, true
		}
	}
	return costs
}
