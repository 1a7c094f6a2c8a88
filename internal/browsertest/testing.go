package browsertest

import (
	"encoding/json"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// ForTest starts a browser for t, closed (with its process group) when t
// ends, or killed a little before t's deadline so that a test killed at
// its timeout leaves no browser behind. Without Chromium the test is
// skipped, saying so, unless BROWSER_REQUIRED=1 (CI), where it fails.
func ForTest(t testing.TB) *Browser {
	t.Helper()
	b, err := Start(t.TempDir())
	if errors.Is(err, ErrNoBrowser) {
		if os.Getenv("BROWSER_REQUIRED") == "1" {
			t.Fatalf("BROWSER_REQUIRED=1: %v (apt-get install chromium)", err)
		}
		t.Skipf("%v: the pages are not checked in a browser (apt-get install chromium; BROWSER_REQUIRED=1 makes this a failure)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	if dl, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dl.Deadline(); ok {
			timer := time.NewTimer(time.Until(d) - 5*time.Second)
			go func() {
				select {
				case <-timer.C:
					_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
				case <-stop:
					timer.Stop()
				}
			}()
		}
	}
	t.Cleanup(func() {
		close(stop)
		if err := b.Close(); err != nil {
			t.Errorf("close browser: %v", err)
		}
	})
	return b
}

// FactsExpr is an expression that reads a page's facts (Facts) once it
// has loaded.
const FactsExpr = `(() => {
  const charts = [...document.querySelectorAll("svg.chart")].map(s => {
    const r = s.getBoundingClientRect();
    const drawn = [...s.querySelectorAll("polyline, rect.bar, circle, line.marker")].filter(e => {
      const b = e.getBBox(); return b.width > 0 || b.height > 0; }).length;
    return {id: s.dataset.chart || "", width: r.width, height: r.height, drawn: drawn};
  });
  const images = [...document.images].map(i => ({src: i.src.slice(0, 40), alt: i.alt, width: i.naturalWidth, height: i.naturalHeight, complete: i.complete}));
  const acct = {};
  document.querySelectorAll("[data-acct]").forEach(c => { if (!(c.dataset.acct in acct)) acct[c.dataset.acct] = c.textContent.trim(); });
  return {title: document.title, charts: charts, images: images, accounting: acct, text: document.body.innerText.length};
})()`

// Facts is what FactsExpr reads.
type Facts struct {
	Title  string `json:"title"`
	Charts []struct {
		ID     string  `json:"id"`
		Width  float64 `json:"width"`
		Height float64 `json:"height"`
		Drawn  int     `json:"drawn"`
	} `json:"charts"`
	Images []struct {
		Src      string `json:"src"`
		Alt      string `json:"alt"`
		Width    int    `json:"width"`
		Height   int    `json:"height"`
		Complete bool   `json:"complete"`
	} `json:"images"`
	// Accounting is the first cell of each data-acct name, as shown.
	Accounting map[string]string `json:"accounting"`
	Text       int               `json:"text"` // characters of visible text
}

// ReadFacts decodes a report's value as Facts.
func ReadFacts(rep *Report) (Facts, error) {
	var f Facts
	err := json.Unmarshal(rep.Value, &f)
	return f, err
}
