package store

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func line(v int64, n int) []byte {
	return []byte(fmt.Sprintf("%d %s\n", v, strings.Repeat("x", n)))
}

func TestLogSubscribeAndNext(t *testing.T) {
	r := NewRetention(Limits{Versions: 1 << 40, Age: time.Hour})
	newLog := func() *Log {
		l := NewLog(1<<20, r)
		for v := int64(1); v <= 5; v += 2 { // versions 1, 3, 5 committed
			l.Append(v, line(v, 3), t0)
		}
		l.Publish(6)
		return l
	}
	cases := []struct {
		from int64
		want string
	}{
		{1, "1 xxx\n3 xxx\n5 xxx\n"},
		{2, "3 xxx\n5 xxx\n"},
		{5, "5 xxx\n"},
		{6, ""},
		{0, ""}, // from now on
	}
	for _, c := range cases {
		l := newLog()
		sub, err := l.Subscribe(c.from)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sub.Next(nil, 1<<20)
		if err != nil || string(got) != c.want {
			t.Fatalf("from %d: %q %v, want %q", c.from, got, err, c.want)
		}
		l.Append(100+c.from, line(100+c.from, 0), t0)
		got, err = sub.Next(got[:0], 1<<20)
		if err != nil || string(got) != fmt.Sprintf("%d \n", 100+c.from) {
			t.Fatalf("from %d, then: %q %v", c.from, got, err)
		}
	}
	// maxBytes: whole lines, at least one.
	l := newLog()
	sub, _ := l.Subscribe(1)
	got, _ := sub.Next(nil, 1)
	if string(got) != "1 xxx\n" {
		t.Fatalf("maxBytes 1: %q", got)
	}
	if l.LastVersion() != 6 {
		t.Fatalf("last version %d", l.LastVersion())
	}
}

func TestLogTrimAndTruncation(t *testing.T) {
	r := NewRetention(Limits{Versions: 1 << 40, Age: time.Hour})
	l := NewLog(30, r) // each line is 10 bytes: three fit
	for v := int64(1); v <= 5; v++ {
		l.Append(v, line(v, 7), t0)
	}
	if _, err := l.Subscribe(2); !errors.Is(err, ErrLogTruncated) {
		t.Fatalf("from 2: %v", err)
	}
	sub, err := l.Subscribe(3)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := sub.Next(nil, 1000); !bytes.HasPrefix(got, []byte("3 ")) || len(got) != 30 {
		t.Fatalf("from 3: %q", got)
	}
	// Retention: a line is dropped once past both limits (2 versions and
	// an hour), not one.
	r2 := NewRetention(Limits{Versions: 2, Age: time.Hour})
	l2 := NewLog(1<<20, r2)
	for v := int64(1); v <= 5; v++ {
		l2.Append(v, line(v, 0), t0)
	}
	if _, err := l2.Subscribe(1); err != nil {
		t.Fatalf("versions passed, age not: %v", err)
	}
	l2.Append(6, line(6, 0), t0.Add(2*time.Hour))
	if _, err := l2.Subscribe(4); !errors.Is(err, ErrLogTruncated) {
		t.Fatalf("both passed: %v", err)
	}
	if _, err := l2.Subscribe(5); err != nil {
		t.Fatalf("age passed, versions not: %v", err)
	}
}

// Next never cuts a subscriber for being behind (the server's rule, over
// time): only for being trimmed past, at a line boundary.
func TestLogSlowConsumerAndClose(t *testing.T) {
	r := NewRetention(Limits{Versions: 1 << 40, Age: time.Hour})
	l := NewLog(25, r)
	slow, _ := l.Subscribe(0)
	fast, _ := l.Subscribe(0)
	for v := int64(1); v <= 2; v++ {
		l.Append(v, line(v, 8), t0) // 11 bytes each
		if _, err := fast.Next(nil, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	if slow.Behind() != 22 {
		t.Fatalf("behind %d", slow.Behind())
	}
	big := line(3, 100) // one line bigger than the log: kept, the others trimmed
	l.Append(3, big, t0)
	if got, err := fast.Next(nil, 1); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("fast consumer: %q %v", got, err)
	}
	if _, err := slow.Next(nil, 1<<20); !errors.Is(err, ErrSlowConsumer) {
		t.Fatalf("slow consumer trimmed past: %v", err)
	}
	if _, err := slow.Next(nil, 1<<20); !errors.Is(err, ErrSlowConsumer) {
		t.Fatal("error not sticky")
	}
	ch := fast.Wait()
	l.Close()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not wake a waiter")
	}
	if _, err := fast.Next(nil, 1); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("after close: %v", err)
	}
	if _, err := l.Subscribe(0); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("subscribe after close: %v", err)
	}
}

func TestLogWaitWakes(t *testing.T) {
	r := NewRetention(Limits{Versions: 1 << 40, Age: time.Hour})
	l := NewLog(1<<20, r)
	sub, _ := l.Subscribe(0)
	ch := sub.Wait()
	select {
	case <-ch:
		t.Fatal("woke with nothing new")
	default:
	}
	l.Append(1, line(1, 0), t0)
	// Appended but not published: a new Wait returns at once (the cursor is
	// behind), the old channel waits for Publish.
	select {
	case <-sub.Wait():
	default:
		t.Fatal("Wait with unread lines blocked")
	}
	l.Publish(1)
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("Publish did not wake")
	}
}

// TestLogConcurrentSubscribers: one writer, many readers under -race; each
// reader sees every line in order; a reader that stalls costs the writer
// nothing and is only behind (the server decides when to cut it).
func TestLogConcurrentSubscribers(t *testing.T) {
	const versions = 2000
	r := NewRetention(Limits{Versions: 1 << 40, Age: time.Hour})
	l := NewLog(1<<20, r)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 8 {
		sub, err := l.Subscribe(1)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			next := int64(1)
			deadline := time.After(30 * time.Second)
			for next <= versions {
				var err error
				buf, err = sub.Next(buf[:0], 4096)
				if err != nil {
					errs <- fmt.Errorf("reader %d: %w", i, err)
					return
				}
				for _, ln := range bytes.SplitAfter(buf, []byte("\n")) {
					if len(ln) == 0 {
						continue
					}
					if want := line(next, 5); !bytes.Equal(ln, want) {
						errs <- fmt.Errorf("reader %d: got %q want %q", i, ln, want)
						return
					}
					next++
				}
				if len(buf) == 0 {
					select {
					case <-sub.Wait():
					case <-deadline:
						errs <- fmt.Errorf("reader %d: stuck at %d", i, next)
						return
					}
				}
			}
		}()
	}
	stalled, _ := l.Subscribe(1)
	for v := int64(1); v <= versions; v++ {
		l.Append(v, line(v, 5), t0)
		if v%16 == 0 {
			l.Publish(v)
		}
	}
	l.Publish(versions)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var total int64
	for v := int64(1); v <= versions; v++ {
		total += int64(len(line(v, 5)))
	}
	if stalled.Behind() != total {
		t.Fatalf("stalled reader behind %d, want %d", stalled.Behind(), total)
	}
}
