package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weaseldb/artifacts"
)

// dedicatedSectionOf is the report's "Dedicated-core throughput" section.
func dedicatedSectionOf(t *testing.T, md string) string {
	t.Helper()
	_, section, ok := strings.Cut(md, "### Dedicated-core throughput\n")
	if !ok {
		t.Fatal("no Dedicated-core throughput section")
	}
	section, _, _ = strings.Cut(section, "\n### ")
	return section
}

// On 2 CPUs the report says plainly which dedicated throughput runs it
// skipped and what they need (the plan printed: how many CPUs, which
// threads where, the one command); where the fitted setup had dedicated
// cores it says where they ran instead.
func TestDedicatedSection(t *testing.T) {
	md, _ := render(t, setupsRun)
	skipped := dedicatedSectionOf(t, md)
	for _, want := range []string{
		"**Not run here: throughput on dedicated cores.** This machine allowed CPUs 0-1",
		"- the fitted setup on dedicated cores (it ran on shared cores instead: 2 allowed CPUs (0-1), fewer than 7",
		"- the wait-strategy comparison's server Never on dedicated cores: needs 7 CPUs",
		"the dedicated fitted setup needs 7 CPUs, each a physical core of its own (allowed here: 0-1)",
		"on CPUs 0-6 it runs io 1; stages 2 3 4 5; load_tester 6, WaitIfUpstreamIdle",
		"  stage 1 cpu=3 core=3 node=0",
		"`DEDICATED=1 scripts/reproduce_threading_report.sh`",
	} {
		if !strings.Contains(skipped, want) {
			t.Errorf("2 CPUs: section lacks %q:\n%s", want, skipped)
		}
	}

	dir := copyRun(t, setupsRun)
	path := filepath.Join(dir, artifacts.SetupsFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	fitted := doc["setups"].([]any)[1].(map[string]any)
	fitted["cores"], fitted["cpu_plan"] = artifacts.CoresDedicated, "io 1-5; stages 6 7 8 9; load_tester 10-15"
	doc["allowed_cpus"] = "0-15"
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	md, _ = render(t, dir)
	ran := dedicatedSectionOf(t, md)
	if !strings.Contains(ran, "Measured here: the fitted setup ran on dedicated cores (io 1-5; stages 6 7 8 9; load_tester 10-15, from the allowed CPUs 0-15") || strings.Contains(ran, "Not run here") {
		t.Errorf("16 CPUs, dedicated:\n%s", ran)
	}
}
