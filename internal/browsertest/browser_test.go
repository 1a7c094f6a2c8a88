package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The checks catch what they are for: a console error, a request other
// than the page, and a chart that did not draw.
func TestOpenReportsWhatAPageDid(t *testing.T) {
	b := ForTest(t)
	dir := t.TempDir()
	tests := []struct {
		name, body   string
		errors, reqs int
		drawn        int
	}{
		{"clean", `<svg class="chart" data-chart="a" viewBox="0 0 10 10"><polyline points="0,0 10,10" stroke="black"/></svg>`, 0, 0, 1},
		{"console error", `<script>console.error("boom")</script>`, 1, 0, 0},
		{"exception", `<script>throw new Error("bad")</script>`, 1, 0, 0},
		{"fetches", `<img src="http://127.0.0.1:9/x.png">`, 1, 1, 0},
		{"empty chart", `<svg class="chart" data-chart="e" viewBox="0 0 10 10"></svg>`, 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".html")
			if err := os.WriteFile(path, []byte("<!DOCTYPE html><title>t</title>"+tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := b.Open(context.Background(), "file://"+path, FactsExpr, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			f, err := ReadFacts(rep)
			if err != nil {
				t.Fatal(err)
			}
			drawn := 0
			for _, c := range f.Charts {
				drawn += c.Drawn
			}
			if (len(rep.ConsoleErrors) > 0) != (tc.errors > 0) || len(rep.Requests) != tc.reqs || drawn != tc.drawn {
				t.Errorf("errors %q, requests %q, drawn %d: want %d errors, %d requests, %d drawn",
					rep.ConsoleErrors, rep.Requests, drawn, tc.errors, tc.reqs, tc.drawn)
			}
			if len(rep.Screenshot) < 8 || string(rep.Screenshot[1:4]) != "PNG" {
				t.Error("no PNG screenshot")
			}
		})
	}
}
