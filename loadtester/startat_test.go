package loadtester

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
	"weaseldb/loadtester/result"
)

// --start-at opens the window at that instant: the warm-up is what is left
// until then, and the result's window starts there.
func TestStartAtOpensTheWindow(t *testing.T) {
	s := startTestServer(t, "tcp", nil)
	cfg := testConfig(s)
	cfg.StartAt = time.Now().Add(700 * time.Millisecond).Truncate(time.Millisecond)
	cfg.Warmup = 300 * time.Millisecond
	cfg.Duration = 500 * time.Millisecond
	began := time.Now()
	res := runOK(t, cfg)
	if res.WindowStart != cfg.StartAt.UTC().Format(time.RFC3339Nano) {
		t.Errorf("window_start %s, want --start-at %s", res.WindowStart, cfg.StartAt.UTC().Format(time.RFC3339Nano))
	}
	if res.Warmup == nil || res.Warmup.Answered == 0 || res.Answered == 0 {
		t.Errorf("warm-up %+v, answered %d", res.Warmup, res.Answered)
	}
	if took := time.Since(began); took < 800*time.Millisecond {
		t.Errorf("the run took %v: it did not wait for --start-at", took)
	}
	// Too late by the time the load can start: a usage error.
	cfg.StartAt = time.Now().Add(-time.Millisecond)
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrStartAtPast) {
		t.Errorf("err %v, want ErrStartAtPast", err)
	}
}

// Cancelled while waiting for --start-at (issue 24): the run is reported as
// interrupted (ErrInterrupted, wrapping the context's error), returns at
// once without sending anything, and its result, as the JSON says it, is
// interrupted with nothing measured, as after an interrupt during the
// warm-up. (cmd/load_tester's tests check the files and the exit status.)
func TestStartAtWaitInterrupted(t *testing.T) {
	s := startTestServer(t, "tcp", nil)
	cfg := testConfig(s)
	cfg.StartAt = time.Now().Add(5 * time.Second)
	cfg.VegetaMax = 100
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for s.conns.Load() == 0 && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	res, err := Run(ctx, cfg)
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want ErrInterrupted wrapping context.Canceled", err)
	}
	if !time.Now().Before(cfg.StartAt) {
		t.Errorf("Run returned after --start-at: it did not stop waiting when cancelled")
	}
	if n := s.requests.Load(); n != 0 {
		t.Errorf("the server read %d requests: nothing may be sent before the window opens", n)
	}
	if res == nil || !res.Interrupted || res.Due != 0 || res.Requests != 0 {
		t.Fatalf("result %+v, want an interrupted one with nothing measured", res)
	}
	var buf bytes.Buffer
	if err := result.WriteJSON(&buf, res); err != nil {
		t.Fatal(err)
	}
	written, err := result.ParseResult(buf.Bytes(), "r.json")
	if err != nil {
		t.Fatalf("JSON: %v", err)
	}
	if !written.Interrupted || written.Due != 0 || len(written.Warnings) == 0 {
		t.Errorf("JSON: interrupted %v, due %d, warnings %q", written.Interrupted, written.Due, written.Warnings)
	}
	// The vegeta results asked for are there to write, and empty.
	if got := vegetaOf(t, res); len(got) != 0 || res.VegetaSampleEvery != 1 {
		t.Errorf("%d vegeta results (every %d), want none", len(got), res.VegetaSampleEvery)
	}
}
