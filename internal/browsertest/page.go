package browsertest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Viewport is the window a page is laid out and shot in (CSS pixels).
const (
	ViewportW = 1200
	ViewportH = 900
)

// Report is what opening a page saw.
type Report struct {
	// ConsoleErrors are the console's errors, uncaught exceptions and the
	// browser's own error log entries (a blocked or failed load among them).
	ConsoleErrors []string
	// Requests are the URLs the page asked for other than itself: a
	// self-contained page has none.
	Requests []string
	// Value is the JSON value of the expression evaluated once the page
	// had loaded.
	Value json.RawMessage
	// Screenshot is a PNG of the top of the page, at most ShotMaxH high.
	Screenshot []byte
}

// ShotMaxH bounds a screenshot's height (CSS pixels): the top of a page is
// what a README shows, and a whole long page is megabytes.
var ShotMaxH = 1600.0

// Open loads url in a new tab, waits for its load event, evaluates expr
// (a JavaScript expression whose value is returned as JSON; "" for none)
// and shoots the page. It gives up at timeout.
func (b *Browser) Open(ctx context.Context, url, expr string, timeout time.Duration) (*Report, error) {
	ctx, cancel := deadline(ctx, timeout)
	defer cancel()
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, err
	}
	defer b.call(context.WithoutCancel(ctx), "", "Target.closeTarget", map[string]any{"targetId": target.TargetID}, nil) //nolint:errcheck // the tab goes with the browser anyway
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		return nil, err
	}
	s := att.SessionID
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} {
		if err := b.call(ctx, s, m, nil, nil); err != nil {
			return nil, err
		}
	}
	if err := b.call(ctx, s, "Emulation.setDeviceMetricsOverride", map[string]any{"width": ViewportW, "height": ViewportH,
		"deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		return nil, err
	}
	rep := &Report{}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := b.call(ctx, s, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return nil, err
	}
	if nav.ErrorText != "" {
		return nil, fmt.Errorf("navigate %s: %s", url, nav.ErrorText)
	}
	if err := b.waitLoad(ctx, s, url, rep); err != nil {
		return nil, err
	}
	if err := b.evaluate(ctx, s, expr, rep); err != nil {
		return nil, err
	}
	if err := b.screenshot(ctx, s, rep); err != nil {
		return nil, err
	}
	b.drain(s, url, rep) // events that came with the replies above
	return rep, nil
}

// waitLoad waits for the page's load event, noting the events before it.
func (b *Browser) waitLoad(ctx context.Context, session, url string, rep *Report) error {
	for {
		select {
		case m, ok := <-b.events:
			if !ok {
				return fmt.Errorf("load %s: the browser went away", url)
			}
			if m.SessionID != session {
				continue
			}
			if m.Method == "Page.loadEventFired" {
				return nil
			}
			note(m, url, rep)
		case <-ctx.Done():
			return fmt.Errorf("load %s: %w", url, ctx.Err())
		}
	}
}

// drain notes the events already received, without waiting for more.
func (b *Browser) drain(session, url string, rep *Report) {
	for {
		select {
		case m, ok := <-b.events:
			if !ok {
				return
			}
			if m.SessionID == session {
				note(m, url, rep)
			}
		default:
			return
		}
	}
}

// note records what an event says of the page: an error or a request.
func note(m message, url string, rep *Report) {
	switch m.Method {
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		if json.Unmarshal(m.Params, &p) == nil && (p.Type == "error" || p.Type == "assert") {
			var parts []string
			for _, a := range p.Args {
				parts = append(parts, fmt.Sprint(a.Value)+a.Description)
			}
			rep.ConsoleErrors = append(rep.ConsoleErrors, "console."+p.Type+": "+strings.Join(parts, " "))
		}
	case "Runtime.exceptionThrown":
		rep.ConsoleErrors = append(rep.ConsoleErrors, "exception: "+string(m.Params))
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Level, Text, URL string
			} `json:"entry"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.Entry.Level == "error" {
			rep.ConsoleErrors = append(rep.ConsoleErrors, fmt.Sprintf("log: %s (%s)", p.Entry.Text, p.Entry.URL))
		}
	case "Network.requestWillBeSent":
		var p struct {
			Request struct {
				URL string `json:"url"`
			} `json:"request"`
		}
		// A data: URI is the page's own bytes, not a request to anyone.
		if json.Unmarshal(m.Params, &p) == nil && p.Request.URL != url && !strings.HasPrefix(p.Request.URL, "data:") {
			rep.Requests = append(rep.Requests, p.Request.URL)
		}
	}
}

// evaluate evaluates expr in the page, its value as JSON into rep.
func (b *Browser) evaluate(ctx context.Context, session, expr string, rep *Report) error {
	if expr == "" {
		return nil
	}
	var ev struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	if err := b.call(ctx, session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &ev); err != nil {
		return err
	}
	if len(ev.ExceptionDetails) > 0 {
		return fmt.Errorf("evaluate: %s", ev.ExceptionDetails)
	}
	rep.Value = ev.Result.Value
	return nil
}

// screenshot shoots the top of the page, its full width.
func (b *Browser) screenshot(ctx context.Context, session string, rep *Report) error {
	var metrics struct {
		CSSContentSize struct {
			Width, Height float64
		} `json:"cssContentSize"`
	}
	if err := b.call(ctx, session, "Page.getLayoutMetrics", nil, &metrics); err != nil {
		return err
	}
	h := min(metrics.CSSContentSize.Height, ShotMaxH)
	var shot struct {
		Data string `json:"data"`
	}
	clip := map[string]any{"x": 0, "y": 0, "width": ViewportW, "height": h, "scale": 1}
	if err := b.call(ctx, session, "Page.captureScreenshot", map[string]any{"format": "png", "clip": clip,
		"captureBeyondViewport": true}, &shot); err != nil {
		return err
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	rep.Screenshot = png
	return nil
}
