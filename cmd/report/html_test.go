package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/browsertest"
)

// generateTwin runs report --html on the recorded run and returns the
// markdown and its twin.
func generateTwin(t *testing.T) (md, page []byte, pagePath string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.md")
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"--run", recordedRun, "--out", out, "--html"}, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	pagePath = strings.TrimSuffix(out, ".md") + ".html"
	if !strings.Contains(stdout.String(), "HTML twin "+pagePath) {
		t.Errorf("stdout %q does not name the twin", stdout.String())
	}
	var err error
	if md, err = os.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	if page, err = os.ReadFile(pagePath); err != nil {
		t.Fatal(err)
	}
	return md, page, pagePath
}

var (
	mdHeading   = regexp.MustCompile(`(?m)^#{1,4} (.+)$`)
	mdFence     = regexp.MustCompile("(?ms)^```.*?^```")
	mdCitation  = regexp.MustCompile(`<sup>\[\d+\]</sup>`)
	mdImage     = regexp.MustCompile(`!\[[^\]]*\]\(([^)]+)\)`)
	htmlHeading = regexp.MustCompile(`<h[1-4][^>]*>(.*?)</h[1-4]>`)
)

// The twin has the markdown's sections, citations and plots, each plot
// inline and captioned with its file.
func TestReportHTMLTwin(t *testing.T) {
	md, page, _ := generateTwin(t)
	var mdHeads, htmlHeads []string
	for _, m := range mdHeading.FindAllSubmatch(mdFence.ReplaceAll(md, nil), -1) {
		mdHeads = append(mdHeads, string(m[1]))
	}
	for _, m := range htmlHeading.FindAllSubmatch(page, -1) {
		htmlHeads = append(htmlHeads, string(m[1]))
	}
	if len(mdHeads) == 0 || strings.Join(mdHeads, "\n") != strings.Join(htmlHeads, "\n") {
		t.Errorf("sections differ:\nmarkdown %q\nHTML     %q", mdHeads, htmlHeads)
	}
	if a, b := len(mdCitation.FindAll(md, -1)), len(mdCitation.FindAll(page, -1)); a == 0 || a != b {
		t.Errorf("%d citations in the markdown, %d in the HTML", a, b)
	}
	for _, m := range mdImage.FindAllSubmatch(md, -1) {
		if !bytes.Contains(page, []byte(`(plot <code>`+string(m[1])+`</code>)`)) {
			t.Errorf("plot %s not captioned in the HTML", m[1])
		}
	}
	if n := bytes.Count(page, []byte(`<img src="data:image/png;base64,`)); n != len(mdImage.FindAll(md, -1)) || n == 0 {
		t.Errorf("%d inline plots, want the markdown's %d", n, len(mdImage.FindAll(md, -1)))
	}
}

// The twin opened in a real browser: nothing fetched, no console error,
// every plot decoded and shown. UPDATE_SCREENSHOTS=1 writes its top to
// docs/img/report.png.
func TestReportHTMLInBrowser(t *testing.T) {
	b := browsertest.ForTest(t)
	md, _, pagePath := generateTwin(t)
	rep, err := b.Open(context.Background(), "file://"+pagePath, browsertest.FactsExpr, time.Minute)
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
	if want := len(mdImage.FindAll(md, -1)); len(f.Images) != want {
		t.Errorf("%d images on the page, want %d", len(f.Images), want)
	}
	for _, img := range f.Images {
		if !img.Complete || img.Width < 100 || img.Height < 50 {
			t.Errorf("plot %q not shown: %dx%d, complete %v", img.Alt, img.Width, img.Height, img.Complete)
		}
	}
	if os.Getenv("UPDATE_SCREENSHOTS") == "1" {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "img", "report.png"), rep.Screenshot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
