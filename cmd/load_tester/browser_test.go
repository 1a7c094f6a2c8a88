package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"weaseldb/internal/browsertest"
	"weaseldb/loadtester/result"
)

// Each page, from results of real runs, opened in a real headless
// Chromium as a person would: no console error, no request but the page
// itself, every chart drawn, the accounting shown as the JSON has it.
// UPDATE_SCREENSHOTS=1 writes each page's screenshot under docs/img/.
func TestHTMLPagesInBrowser(t *testing.T) {
	b := browsertest.ForTest(t)
	files := realResults(t)
	tests := []struct {
		name   string
		inputs []string
		charts int // at least
		acct   string
	}{
		{"plain", []string{files["plain"]}, 5, files["plain"]},
		{"rate", []string{files["rate"]}, 5, files["rate"]},
		{"steps", []string{files["steps"]}, 1 + 2*5, ""},
		{"knee", []string{files["knee"]}, 1 + 2*5, ""},
		{"merged", []string{files["merged"]}, 5, files["merged"]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := filepath.Join(t.TempDir(), tc.name+".html")
			if code := run(append(append([]string{"html"}, tc.inputs...), "-o", page), os.Stdout, os.Stderr); code != exitOK {
				t.Fatalf("load_tester html: exit %d", code)
			}
			url := "file://" + page
			rep, err := b.Open(context.Background(), url, browsertest.FactsExpr, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.ConsoleErrors) > 0 || len(rep.Requests) > 0 {
				t.Errorf("console errors %q, requests %q: want none", rep.ConsoleErrors, rep.Requests)
			}
			f, err := browsertest.ReadFacts(rep)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Charts) < tc.charts {
				t.Errorf("%d charts, want at least %d", len(f.Charts), tc.charts)
			}
			for _, c := range f.Charts {
				if c.Drawn == 0 || c.Width < 100 || c.Height < 40 {
					t.Errorf("chart %s: %d elements drawn in %.0fx%.0f px", c.ID, c.Drawn, c.Width, c.Height)
				}
			}
			want := accountingOf(t, tc.acct, files[tc.name])
			for k, v := range want {
				if f.Accounting[k] != v {
					t.Errorf("page shows %s %q, the JSON %q", k, f.Accounting[k], v)
				}
			}
			saveScreenshot(t, "load_tester_"+tc.name+".png", rep.Screenshot)
		})
	}
}

// accountingOf is the accounting of a result (path), or of the first step
// of a steps document (stepsPath), as the page prints it.
func accountingOf(t *testing.T, path, stepsPath string) map[string]string {
	t.Helper()
	var res *result.Result
	if path != "" {
		r, err := result.ReadResult(path)
		if err != nil {
			t.Fatal(err)
		}
		res = r
	} else {
		sr, err := result.ReadSteps(stepsPath)
		if err != nil {
			t.Fatal(err)
		}
		res = sr.Steps[0].Result
	}
	return map[string]string{"due": fmt.Sprint(res.Due), "answered": fmt.Sprint(res.Answered), "failed": fmt.Sprint(res.Failed),
		"unfinished": fmt.Sprint(res.Unfinished), "dropped": fmt.Sprint(res.Dropped)}
}

// saveScreenshot writes png under docs/img/ when UPDATE_SCREENSHOTS=1.
func saveScreenshot(t *testing.T, name string, png []byte) {
	t.Helper()
	if os.Getenv("UPDATE_SCREENSHOTS") != "1" {
		return
	}
	if err := os.WriteFile(filepath.Join("..", "..", "docs", "img", name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
