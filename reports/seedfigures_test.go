package reports

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"weaseldb/artifacts"
)

// Issue 24 (8.1): "10 threads × 2000 connections" read as 20,000
// connections. Every place that describes a setup's load tester says how
// many connections there are in all and over which threads.
func TestSetupDescriptionsGiveConnectionsInAll(t *testing.T) {
	tests := []struct {
		fixture, heading string
		want             []string
	}{
		{setupsRun, "## Summary", []string{
			"load tester: 2,000 connections in all, over 10 network threads and 2 connect threads",
			"load tester: 100 connections in all, over 1 network thread and 2 connect threads",
		}},
		{setupsRun, "### Threading Architecture", []string{
			"| connections, in all | load tester network threads | load tester connect threads |",
			"| the seed's setup | 8 | 4 | WaitIfUpstreamIdle | 2,000 | 10 | 2 |",
			"| fitted setup | 1 | 4 | WaitIfStageEmpty | 100 | 1 | 2 |",
		}},
		{setupsRun, "## Where this run differs from the seed", []string{
			"| load tester: connections, in all | 2,000<sup>[",
			"| load tester: network threads | 10<sup>[",
			"| load tester: connect threads | 8<sup>[",
		}},
		{recordedRun, "## Summary", []string{"load tester: 2,000 connections in all, over 10 network threads and 2 connect threads"}},
	}
	rendered := map[string]string{}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.fixture)+"/"+strings.TrimLeft(tc.heading, "# "), func(t *testing.T) {
			md, ok := rendered[tc.fixture]
			if !ok {
				md, _ = render(t, tc.fixture)
				rendered[tc.fixture] = md
			}
			sec := section(t, md, tc.heading)
			for _, want := range tc.want {
				if !strings.Contains(sec, want) {
					t.Errorf("%s lacks %q:\n%s", tc.heading, want, sec)
				}
			}
			// "N threads × M connections" is the wording that misled.
			if regexp.MustCompile(`threads? × [0-9,]+ connections`).MatchString(sec) {
				t.Errorf("%s still multiplies threads by connections:\n%s", tc.heading, sec)
			}
		})
	}
}

// Issue 24 (8.2): the seed report lists 8 connect threads where the runs
// use the count they were given (2 by default, what the seed's own script
// passes). The Summary says which, cites both, and gives the reason from
// what the connect threads did: the connections each setup's median round
// opened in its measured window.
func TestConnectThreadsExplained(t *testing.T) {
	tests := []struct {
		name         string
		seed, fitted float64 // each setup's --connect-threads
		want         []string
		notWant      string
	}{
		{"the seed's script's 2", 2, 2, []string{
			"- **Connect threads**: both setups open their connections with 2<sup>[",
			"the seed report's setup lists 8<sup>[",
			"the seed's own reproduce_threading_report.sh passes 2<sup>[",
			"Connections opened in the measured window of the median round: the seed's setup 0<sup>[",
			", fitted setup 1,500<sup>[",
			"no more than 2 of the seed report's 8 could run at once",
		}, "as the seed report's setup does"},
		{"the seed report's 8", 8, 8, []string{
			"- **Connect threads**: both setups open their connections with 8<sup>[",
			"as the seed report's setup does (8<sup>[",
		}, "reproduce_threading_report.sh passes"},
		{"each its own", 2, 3, []string{
			"- **Connect threads** (the load tester's threads that open connections): the seed's setup 2<sup>[",
			", fitted setup 3<sup>[",
			"the seed report's setup lists 8<sup>[",
		}, "both setups"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyRun(t, setupsRun)
			threads := map[string]float64{artifacts.SetupSeed: tc.seed, artifacts.SetupFitted: tc.fitted}
			editJSON(t, dir, artifacts.SetupsFile, func(doc map[string]any) {
				for _, s := range doc["setups"].([]any) {
					s := s.(map[string]any)
					s["connect_threads"] = threads[s["name"].(string)]
				}
			})
			for _, setup := range []string{artifacts.SetupSeed, artifacts.SetupFitted} {
				for _, r := range []string{"1", "2", "3"} {
					editJSON(t, dir, "rounds/"+setup+"-r"+r+".load.json", func(doc map[string]any) {
						doc["config"].(map[string]any)["connect_threads"] = threads[setup]
					})
				}
			}
			md, _ := render(t, dir)
			sum := section(t, md, "## Summary")
			for _, want := range tc.want {
				if !strings.Contains(sum, want) {
					t.Errorf("Summary lacks %q:\n%s", want, sum)
				}
			}
			if strings.Contains(sum, tc.notWant) {
				t.Errorf("Summary says %q:\n%s", tc.notWant, sum)
			}
			checkTraces(t, dir, md)
		})
	}
}

// Issue 24 (8.3): wherever the report gives its own theoretical maximum
// CPU time per request, or its CPU work efficiency, the seed's figure
// stands beside it, cited as "seed report".
func TestSeedTheoreticalMaximumBesideOurs(t *testing.T) {
	for _, dir := range fixtures {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			md, _ := render(t, dir)
			rows := parseSources(t, md)
			idOf := func(name string) string {
				for _, r := range rows {
					if r.name == name {
						if r.artifact != seedArtifact {
							t.Errorf("%q cites %q, not the seed report", name, r.artifact)
						}
						return "<sup>[" + strconv.Itoa(r.id) + "]</sup>"
					}
				}
				t.Fatalf("no Sources row %q", name)
				return ""
			}
			theo, eff := "1,212 ns"+idOf("Seed theoretical maximum CPU time per request"), "61 %"+idOf("Seed CPU work efficiency")
			health := section(t, md, "### Health Check Pipeline (/ok endpoint)")
			for _, line := range strings.Split(health, "\n") {
				switch {
				case strings.HasPrefix(line, "- **Theoretical maximum CPU time per request"):
					if !strings.Contains(line, "the seed's: "+theo) {
						t.Errorf("no seed figure %q beside ours: %s", theo, line)
					}
				case strings.HasPrefix(line, "- **CPU work efficiency**"):
					if !strings.Contains(line, "the seed's: "+eff) {
						t.Errorf("no seed figure %q beside ours: %s", eff, line)
					}
				}
			}
			diff := section(t, md, "## Where this run differs from the seed")
			for _, want := range []string{"| theoretical maximum CPU time per request | " + theo + " |", "| CPU work efficiency | " + eff + " |"} {
				if !strings.Contains(diff, want) {
					t.Errorf("seed comparison lacks %q:\n%s", want, diff)
				}
			}
		})
	}
}
