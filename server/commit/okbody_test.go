package commit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"weaseldb/server/config"
	"weaseldb/server/pipeline"
)

// Every size from the minimum on is a JSON object of exactly that many bytes
// whose status is "ok"; below the minimum is an error.
func TestOKBody(t *testing.T) {
	if config.MinOkBodyBytes != len(plainOKBody) || config.Default().Benchmark.OkBodyBytes != len(plainOKBody) {
		t.Fatalf("config's minimum and default (%d, %d) are not the %d bytes of %s",
			config.MinOkBodyBytes, config.Default().Benchmark.OkBodyBytes, len(plainOKBody), plainOKBody)
	}
	for _, n := range []int{15, 16, 22, 23, 24, 25, 100, 1500, 64 << 10, config.MaxOkBodyBytes} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			b, err := OKBody(n)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) != n || cap(b) != n {
				t.Fatalf("len %d cap %d, want %d", len(b), cap(b), n)
			}
			var v struct{ Status string }
			if err := json.Unmarshal(b, &v); err != nil || v.Status != "ok" {
				t.Fatalf("%.40q...: status %q, %v", b, v.Status, err)
			}
		})
	}
	if b, _ := OKBody(15); string(b) != plainOKBody {
		t.Fatalf("OKBody(15) = %q, want %s", b, plainOKBody)
	}
	for _, n := range []int{-1, 0, 14} {
		if _, err := OKBody(n); err == nil || !strings.Contains(err.Error(), "below") {
			t.Fatalf("OKBody(%d): %v, want an error", n, err)
		}
	}
}

// The pipeline builds the configured body once and answers /ok with it.
func TestPipelineOKBodyBytes(t *testing.T) {
	cp, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty, ReleaseThreads: 1, OkBodyBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	ok := cp.okResponse(&Reply[*testConn]{Framing: keepAlive}) // nothing submitted: no persist stage at work
	if len(cp.okBody) != 1000 || !strings.HasSuffix(string(ok), string(cp.okBody)) ||
		!strings.Contains(string(ok), "Content-Length: 1000\r\n") {
		t.Fatalf("response %.120q", ok)
	}
	if _, err := New(Options[*testConn]{Responder: testResponder{}, WaitStrategy: pipeline.WaitIfStageEmpty, ReleaseThreads: 1, OkBodyBytes: 3}); err == nil {
		t.Fatal("New with a 3-byte /ok body: no error")
	}
}
