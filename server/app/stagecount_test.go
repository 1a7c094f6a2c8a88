package app

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"weaseldb/internal/nettest"
	"weaseldb/server/config"
)

// Every GET /ok goes through the four stages (issue 54 item 6): after N
// answered, each stage's weaseldb_pipeline_batch_size_sum is N, and the
// request metrics count all N as soon as their answers are in (a release
// thread records its batch before it sends any of its answers).
//
// With thread_names "auto" (unpinned) the loops run the stages to
// completion; with true the stages are locked goroutines woken per batch.
func TestEveryOKPassesEveryStage(t *testing.T) {
	for _, names := range []config.ThreadNames{config.ThreadNamesAuto, config.ThreadNamesOn} {
		for _, releaseThreads := range []int{1, 2} {
			t.Run(fmt.Sprintf("thread names %s/release threads %d", names, releaseThreads), func(t *testing.T) {
				testEveryOKPassesEveryStage(t, names, releaseThreads)
			})
		}
	}
}

func testEveryOKPassesEveryStage(t *testing.T, names config.ThreadNames, releaseThreads int) {
	ts := startServer(t, func(c *config.Config) {
		c.Commit.PipelineReleaseThreads = releaseThreads
		c.Server.ThreadNames = names
		c.Commit.PipelineStageWaits = true
	})
	if inline := names == config.ThreadNamesAuto; ts.srv.commit.RunsInline() != inline {
		t.Fatalf("thread_names %s: the loops run the stages: %v, want %v", names, !inline, inline)
	}
	c, err := net.DialTimeout("tcp", ts.tcpAddr, nettest.DialTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	sent := 0
	for _, burst := range []int{1, 16, 1, 1, 16, 3, 1, 16} {
		var reqs strings.Builder
		for range burst {
			reqs.WriteString(okRequest(sent))
			sent++
		}
		if _, err := c.Write([]byte(reqs.String())); err != nil {
			t.Fatal(err)
		}
		for range burst {
			if resp, _ := readResponse(t, br); resp.StatusCode != 200 {
				t.Fatalf("GET /ok: %s", resp.Status)
			}
		}
	}
	want := strconv.Itoa(sent)
	scrape := func() string {
		body, err := ts.srv.Metrics.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	for _, line := range []string{
		`weaseldb_http_requests_total{code="200",route="ok"} ` + want,
		`weaseldb_http_request_duration_seconds_count{route="ok"} ` + want,
	} {
		if body := scrape(); !strings.Contains(body, line+"\n") {
			t.Errorf("answered %d, but metrics lack %q:\n%s", sent, line, grepLines([]byte(body), "route=\"ok\""))
		}
	}
	// A stage records its batch after it released it: the last
	// batches' records may still be on their way.
	var body string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		body = scrape()
		if strings.Count(body, "_batch_size_sum{stage=") == 4 && allStagesAt(body, want) && waitPerBatch(body) {
			return
		}
	}
	t.Fatalf("answered %d /ok, but not every stage's batch size sum (and wait count, one per batch) says so:\n%s\n%s", sent,
		grepLines([]byte(body), "batch_size_sum"), grepLines([]byte(body), "_count{stage="))
}

// waitPerBatch says whether every stage recorded one wait
// (weaseldb_pipeline_stage_wait_seconds) per batch it recorded.
func waitPerBatch(body string) bool {
	for _, stage := range []string{"sequence", "resolve", "persist", "release"} {
		batches, waits := "", ""
		for _, l := range strings.Split(body, "\n") {
			if v, ok := strings.CutPrefix(l, `weaseldb_pipeline_batch_size_count{stage="`+stage+`"} `); ok {
				batches = v
			}
			if v, ok := strings.CutPrefix(l, `weaseldb_pipeline_stage_wait_seconds_count{stage="`+stage+`"} `); ok {
				waits = v
			}
		}
		if batches == "" || waits != batches {
			return false
		}
	}
	return true
}

func allStagesAt(body, want string) bool {
	for _, stage := range []string{"sequence", "resolve", "persist", "release"} {
		if !strings.Contains(body, `weaseldb_pipeline_batch_size_sum{stage="`+stage+`"} `+want+"\n") {
			return false
		}
	}
	return true
}
