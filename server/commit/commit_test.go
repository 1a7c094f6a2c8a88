package commit

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"weaseldb/server/metrics"
	"weaseldb/server/pipeline"
)

// Every entry passes every stage once, with more entries than ring slots,
// several producers and several release threads; Close joins every stage.
func TestEveryEntryReleasedOnceAndCloseJoins(t *testing.T) {
	for _, strategy := range pipeline.Strategies() {
		for _, threads := range []int{1, 3} {
			t.Run(fmt.Sprintf("%v/%d", strategy, threads), func(t *testing.T) {
				m := metrics.New()
				cp, err := New(Options{WaitStrategy: strategy, ReleaseThreads: threads, LgSlotCount: 4, OkResolveIterations: 10, Metrics: m})
				if err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				for p := 0; p < 3; p++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						batch := make([]Entry, 50)
						for i := range batch {
							batch[i] = Entry{Kind: KindOK, KeepAlive: true, Route: metrics.RouteOK, Start: time.Now()}
						}
						for r := 0; r < 10; r++ {
							cp.Submit(batch)
						}
					}()
				}
				wg.Wait()
				done := make(chan struct{})
				go func() { cp.Close(); close(done) }()
				select {
				case <-done:
				case <-time.After(20 * time.Second):
					t.Fatal("Close did not return")
				}
				out, err := m.Encode()
				if err != nil {
					t.Fatal(err)
				}
				if want := `weaseldb_http_requests_total{code="200",route="ok"} 1500`; !strings.Contains(string(out), want) {
					t.Fatalf("want %s in\n%s", want, grep(string(out), "requests_total"))
				}
			})
		}
	}
}

func grep(s, sub string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func TestOkResponse(t *testing.T) {
	if !strings.HasPrefix(string(okResponse), "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(string(okResponse), "\r\n\r\n{\"status\":\"ok\"}") {
		t.Fatalf("%q", okResponse)
	}
}
