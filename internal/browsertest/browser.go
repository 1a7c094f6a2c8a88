// Package browsertest opens pages in a real headless Chromium, as a person
// would, and reports what a test must check: console errors, any request
// other than the page itself, values read from the drawn page, and a
// screenshot.
//
// It speaks the Chrome DevTools Protocol over --remote-debugging-pipe
// (commands on the browser's fd 3, replies and events on its fd 4, each a
// JSON message ended by a NUL byte), writing the few commands it needs by
// hand: a CDP client library would be a dependency many times this size,
// and a pipe needs no port, so parallel tests never collide.
package browsertest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// ErrNoBrowser is returned by Start when no Chromium is installed.
var ErrNoBrowser = errors.New("no chromium installed")

// Binary is the browser started: Debian's chromium.
var Binary = "/usr/bin/chromium"

// Browser is a running headless Chromium.
type Browser struct {
	cmd     *exec.Cmd
	toB     *os.File // our end of the browser's fd 3
	fromB   *os.File // our end of the browser's fd 4
	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan message
	events  chan message // every event, in order
	done    chan struct{}
	readErr error
}

// message is one CDP message: a reply (ID set) or an event (Method set).
type message struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Start starts a headless Chromium with a fresh profile in profileDir. It
// runs in its own process group, killed by Close, and dies with the
// calling process (a test killed at its timeout leaves no browser).
func Start(profileDir string) (*Browser, error) {
	if _, err := os.Stat(Binary); err != nil {
		return nil, fmt.Errorf("%w (%s): %v", ErrNoBrowser, Binary, err)
	}
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("browser pipe: %w", err)
	}
	evR, evW, err := os.Pipe()
	if err != nil {
		cmdR.Close()
		cmdW.Close()
		return nil, fmt.Errorf("browser pipe: %w", err)
	}
	cmd := exec.Command(Binary, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+profileDir,
		"--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--metrics-recording-only",
		"--hide-scrollbars", "--mute-audio", "about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, evW} // fds 3 and 4
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{cmdR, cmdW, evR, evW} {
			f.Close()
		}
		return nil, fmt.Errorf("start %s: %w", Binary, err)
	}
	cmdR.Close()
	evW.Close()
	b := &Browser{cmd: cmd, toB: cmdW, fromB: evR, pending: map[int64]chan message{},
		events: make(chan message, 4096), done: make(chan struct{})}
	go b.read()
	return b, nil
}

// Close kills the browser and every process it started (its process
// group), and waits for it.
func (b *Browser) Close() error {
	if b.cmd.Process != nil {
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	}
	b.toB.Close()
	err := b.cmd.Wait()
	b.fromB.Close()
	<-b.done
	var exit *exec.ExitError
	if errors.As(err, &exit) { // killed, as asked
		return nil
	}
	return err
}

// read delivers the browser's messages: replies to their callers, events
// to the events channel (dropped, never blocking, when nobody drains it).
func (b *Browser) read() {
	defer close(b.done)
	r := bufio.NewReaderSize(b.fromB, 1<<20)
	for {
		raw, err := r.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.readErr = fmt.Errorf("browser pipe: %w", err)
			for id, ch := range b.pending {
				close(ch)
				delete(b.pending, id)
			}
			b.mu.Unlock()
			close(b.events)
			return
		}
		var m message
		if err := json.Unmarshal(raw[:len(raw)-1], &m); err != nil {
			continue // not ours to judge: a message we cannot read is not one we wait for
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.pending[m.ID]
			delete(b.pending, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		select {
		case b.events <- m:
		default:
		}
	}
}

// call sends a command (in session, "" for the browser) and waits for its
// reply, decoding its result into out (nil: ignored).
func (b *Browser) call(ctx context.Context, session, method string, params, out any) error {
	b.mu.Lock()
	if b.readErr != nil {
		b.mu.Unlock()
		return b.readErr
	}
	b.nextID++
	id := b.nextID
	ch := make(chan message, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	if params == nil {
		params = struct{}{}
	}
	p, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	msg, err := json.Marshal(message{ID: id, Method: method, Params: p, SessionID: session})
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if _, err := b.toB.Write(append(msg, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: the browser went away", method)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		if out != nil {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// deadline is a context that ends by d.
func deadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}
