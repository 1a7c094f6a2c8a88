package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/browsertest"
)

// summarySections reads the text summary's sections, by the label each
// line starts with, as the page's data-section names them; the stage rows
// (by number), the checks (by expression) and the thresholds (expression
// to what was measured, as printed).
type summarySections struct {
	sections   map[string]bool
	stages     []string
	checks     []string
	thresholds map[string]string
	verdict    string
}

var (
	sectionOfLabel = []struct{ prefix, section string }{
		{"  due  ", "accounting"}, {"  latency  ", "latency"}, {"  latency (CO)  ", "latency"}, {"  failed latency ", "latency"},
		{"  service time  ", "latency"}, {"  per kind  ", "kinds"}, {"  per stage  ", "stages"}, {"  checks  ", "checks"},
		{"  connections  ", "connections"}, {"  errors  ", "errors"}, {"  client CPU  ", "client"}, {"  WARNING:", "warnings"},
		{"  threshold  ", "thresholds"}, {"  verdict  ", "verdict"},
	}
	stageLine     = regexp.MustCompile(`^ {16}(\d+) \d`)
	checkLine     = regexp.MustCompile(`^  (?:checks {8}| {14})(.+): \d+ passed, \d+ failed`)
	thresholdLine = regexp.MustCompile(`^  (\S+) +(\S+)  (pass|FAIL)`)
)

func readSummary(text string) summarySections {
	s := summarySections{sections: map[string]bool{}, thresholds: map[string]string{}}
	section := ""
	for _, line := range strings.Split(text, "\n") {
		for _, l := range sectionOfLabel {
			if strings.HasPrefix(line, l.prefix) {
				section = l.section
				s.sections[section] = true
			}
		}
		switch {
		case section == "stages" && stageLine.MatchString(line):
			s.stages = append(s.stages, stageLine.FindStringSubmatch(line)[1])
		case section == "checks" && checkLine.MatchString(line):
			s.checks = append(s.checks, checkLine.FindStringSubmatch(line)[1])
		case section == "thresholds" && thresholdLine.MatchString(line):
			m := thresholdLine.FindStringSubmatch(line)
			s.thresholds[m[1]] = m[2]
		case strings.HasPrefix(line, "  verdict"):
			s.verdict = strings.TrimSpace(strings.TrimPrefix(line, "  verdict"))
		}
	}
	return s
}

// pageSectionsExpr reads the same of the page.
const pageSectionsExpr = `(() => {
  const all = (sel, f) => [...document.querySelectorAll(sel)].map(f);
  const th = {};
  all("[data-threshold]", e => th[e.dataset.threshold] = e.querySelector("[data-measured]").textContent.trim());
  const v = document.querySelector("[data-section=verdict] span");
  return {sections: all("[data-section]", e => e.dataset.section), stages: all("[data-stage]", e => e.dataset.stage),
    checks: all("[data-check]", e => e.dataset.check), thresholds: th, verdict: v ? v.textContent.trim() : "",
    width: window.innerWidth, widest: [...document.querySelectorAll("table td, table th")].filter(e => e.getBoundingClientRect().right > window.innerWidth).map(e => e.closest("table").className + ":" + e.textContent.slice(0,80)).join(" | "), rightmost: Math.max(0, ...all("table td, table th", e => e.getBoundingClientRect().right))};
})()`

type pageSections struct {
	Sections   []string          `json:"sections"`
	Stages     []string          `json:"stages"`
	Checks     []string          `json:"checks"`
	Thresholds map[string]string `json:"thresholds"`
	Verdict    string            `json:"verdict"`
	Width      float64           `json:"width"`
	Rightmost  float64           `json:"rightmost"`
	Widest     string            `json:"widest"`
}

// Issue 55: a run's HTML page shows everything its text summary shows — a
// section for each of the summary's, a row per stage and per check, each
// threshold measured in its own unit as the text has it (checks>99% as a
// percentage, never a latency), the verdict — read in a real Chromium;
// and a rate-steps page keeps its thresholds on screen.
func TestHTMLShowsWhatTheSummaryShows(t *testing.T) {
	b := browsertest.ForTest(t)
	s := startOKServer(t, 0)
	dir := t.TempDir()
	workload := filepath.Join(dir, "w.toml")
	if err := os.WriteFile(workload, []byte("[[request]]\nname = \"a\"\npath = \"/a\"\n\n[[request]]\nname = \"b\"\npath = \"/b\"\nweight = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	thresholds := []string{"--threshold", "checks>99%", "--threshold", "p99<10s", "--threshold", "rps>1", "--threshold", "errors<50%"}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"stages, kinds, checks", append([]string{"--concurrency", "2", "--rate", "200", "--stages", "200ms:200,200ms:300", "--workload", workload,
			"--check", "status==200", "--check", `body contains "nope"`, "--max-errors", "100000"}, thresholds...)},
		{"concurrency stages", append([]string{"--concurrency-stages", "200ms:2,200ms:1", "--check", "status==200"}, thresholds...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".html")
			var out, errOut bytes.Buffer
			args := append([]string{"--port", s.port(), "--stats-interval", "0.1", "--quiet", "--html", page}, tc.args...)
			if code := run(args, &out, &errOut); code != exitOK && code != exitThreshold {
				t.Fatalf("exit %d: %s\n%s", code, errOut.String(), out.String())
			}
			text := readSummary(out.String())
			got := openSections(t, b, page)
			for section := range text.sections {
				if !contains(got.Sections, section) {
					t.Errorf("the summary has a %s section, the page's are %q\n%s", section, got.Sections, out.String())
				}
			}
			if len(text.stages) == 0 || strings.Join(text.stages, ",") != strings.Join(got.Stages, ",") {
				t.Errorf("stages: the summary's %q, the page's %q", text.stages, got.Stages)
			}
			if len(text.checks) == 0 || !sameSet(text.checks, got.Checks) {
				t.Errorf("checks: the summary's %q, the page's %q", text.checks, got.Checks)
			}
			if len(text.thresholds) != 4 || len(got.Thresholds) != 4 {
				t.Errorf("thresholds: the summary's %q, the page's %q", text.thresholds, got.Thresholds)
			}
			for expr, measured := range text.thresholds {
				if got.Thresholds[expr] != measured {
					t.Errorf("threshold %s: the summary measured %q, the page %q", expr, measured, got.Thresholds[expr])
				}
			}
			if !strings.HasSuffix(got.Thresholds["checks>99%"], "%") {
				t.Errorf("checks>99%% shown as %q: want a percentage", got.Thresholds["checks>99%"])
			}
			if text.verdict == "" || got.Verdict != text.verdict {
				t.Errorf("verdict: the summary's %q, the page's %q", text.verdict, got.Verdict)
			}
		})
	}
	t.Run("rate steps keep the thresholds on screen", func(t *testing.T) {
		page := filepath.Join(dir, "steps.html")
		var out, errOut bytes.Buffer
		args := append([]string{"--port", s.port(), "--concurrency", "2", "--rate-steps", "100,200", "--duration", "0.2",
			"--stats-interval", "0.1", "--quiet", "--check", `body contains "nope"`, "--max-errors", "100000", "--html", page}, thresholds...)
		if code := run(args, &out, &errOut); code != exitOK && code != exitThreshold {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		got := openSections(t, b, page)
		if got.Rightmost <= 0 || got.Rightmost > got.Width {
			t.Errorf("a table cell ends at %.0f px, past the %.0f px window: %s", got.Rightmost, got.Width, got.Widest)
		}
	})
}

func openSections(t *testing.T, b *browsertest.Browser, page string) pageSections {
	t.Helper()
	rep, err := b.Open(context.Background(), "file://"+page, pageSectionsExpr, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.ConsoleErrors) > 0 || len(rep.Requests) > 0 {
		t.Errorf("console errors %q, requests %q: want none", rep.ConsoleErrors, rep.Requests)
	}
	var got pageSections
	if err := json.Unmarshal(rep.Value, &got); err != nil {
		t.Fatalf("%v: %s", err, rep.Value)
	}
	return got
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sameSet(a, b []string) bool {
	a, b = append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(a)
	sort.Strings(b)
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}
