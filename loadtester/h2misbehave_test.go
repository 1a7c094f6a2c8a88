package loadtester

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Misbehave is an h2c server (prior knowledge) built on x/net's Framer
// and hpack that does, on purpose, what RFC 9113 allows and a careless
// client gets wrong: header blocks split into CONTINUATION frames (even
// written a byte at a time), huge header blocks, small flow-control
// windows refilled only once the data is read, SETTINGS changed while
// streams are open. It checks the client in turn: frames within its
// SETTINGS_MAX_FRAME_SIZE, DATA within every window, request headers
// within its SETTINGS_MAX_HEADER_LIST_SIZE, whole bodies.
//
// Who owns what: the settings are set before the server starts and
// read-only after; each connection's goroutine owns its mbConn (framer,
// encoder, windows); the counts are atomics; violations are under mu.
type h2Misbehave struct {
	initialWindow   uint32 // SETTINGS_INITIAL_WINDOW_SIZE advertised (with windowSet; else the default)
	windowSet       bool
	maxFrame        uint32 // SETTINGS_MAX_FRAME_SIZE advertised (0: the default, 16384)
	maxHeaderList   uint32 // SETTINGS_MAX_HEADER_LIST_SIZE advertised (0: none)
	laterHeaderList uint32 // sent in a second SETTINGS once the first response is written (0: none)
	// newWindow, with changeWindow: the SETTINGS_INITIAL_WINDOW_SIZE sent
	// on the connection's first DATA frame (or, with a window of 0, its
	// first request), before any WINDOW_UPDATE for it.
	newWindow    uint32
	changeWindow bool
	fragment     int  // response header blocks split into fragments of this many bytes (0: one HEADERS)
	oneByte      bool // every byte written on its own
	pad          int  // bytes of extra fields in every response header block
	hugeEvery    int  // every n-th response on a connection has a header block of hugeBytes (0: none)
	hugeBytes    int

	url       string
	answered  atomic.Int64 // responses written
	bodyBytes atomic.Int64 // request body bytes read
	mu        sync.Mutex
	broken    []string // guarded by mu: what the client did wrong
}

// mbConn is one connection's state, its goroutine's alone.
type mbConn struct {
	s         *h2Misbehave
	fr        *http2.Framer
	enc       *hpack.Encoder
	block     strings.Builder
	initial   int64            // the stream window in force (the client acknowledged it)
	pending   []int64          // SETTINGS_INITIAL_WINDOW_SIZE sent, not yet acknowledged, oldest first
	conn      int64            // the connection's receive window
	streams   map[uint32]int64 // open streams' receive windows
	wantBody  map[uint32]int64 // open streams' content-length
	gotBody   map[uint32]int64
	responses int
	changed   bool
}

func startH2Misbehave(t *testing.T, s *h2Misbehave) *h2Misbehave {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	var conns sync.Map
	t.Cleanup(func() { conns.Range(func(k, _ any) bool { k.(net.Conn).Close(); return true }) })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Store(nc, nil)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conns.Delete(nc)
				defer nc.Close()
				s.serve(nc)
			}()
		}
	}()
	s.url = "http://" + ln.Addr().String()
	return s
}

func (s *h2Misbehave) violate(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.broken) < 20 {
		s.broken = append(s.broken, fmt.Sprintf(format, args...))
	}
}

func (s *h2Misbehave) violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.broken...)
}

// byteWriter writes every byte on its own.
type byteWriter struct{ w io.Writer }

func (b byteWriter) Write(p []byte) (int, error) {
	for i := range p {
		if _, err := b.w.Write(p[i : i+1]); err != nil {
			return i, err
		}
	}
	return len(p), nil
}

func (s *h2Misbehave) serve(nc net.Conn) {
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(nc, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	var w io.Writer = nc
	if s.oneByte {
		w = byteWriter{nc}
	}
	c := &mbConn{s: s, fr: http2.NewFramer(w, bufio.NewReader(nc)), initial: 65535, conn: 65535,
		streams: map[uint32]int64{}, wantBody: map[uint32]int64{}, gotBody: map[uint32]int64{}}
	c.enc = hpack.NewEncoder(&c.block)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.fr.MaxHeaderListSize = 1 << 24 // the server checks the client's limit itself
	maxFrame := uint32(16384)
	settings := []http2.Setting{{ID: http2.SettingMaxConcurrentStreams, Val: 100}}
	if s.maxFrame != 0 {
		maxFrame = s.maxFrame
		settings = append(settings, http2.Setting{ID: http2.SettingMaxFrameSize, Val: s.maxFrame})
	}
	c.fr.SetMaxReadFrameSize(maxFrame)
	if s.windowSet {
		c.initial = int64(s.initialWindow)
		settings = append(settings, http2.Setting{ID: http2.SettingInitialWindowSize, Val: s.initialWindow})
	}
	if s.maxHeaderList != 0 {
		settings = append(settings, http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: s.maxHeaderList})
	}
	c.fr.WriteSettings(settings...)
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			if errors.Is(err, http2.ErrFrameTooLarge) {
				s.violate("a frame over SETTINGS_MAX_FRAME_SIZE %d", maxFrame)
			}
			return
		}
		if err := c.frame(f); err != nil {
			return
		}
	}
}

// frame handles one frame from the client.
func (c *mbConn) frame(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.SettingsFrame:
		if f.IsAck() { // a window change applies to the streams as the client acknowledges it
			if len(c.pending) > 0 {
				delta := c.pending[0] - c.initial
				c.initial, c.pending = c.pending[0], c.pending[1:]
				for id := range c.streams {
					c.streams[id] += delta
				}
			}
			return nil
		}
		return c.fr.WriteSettingsAck()
	case *http2.MetaHeadersFrame:
		return c.headers(f)
	case *http2.DataFrame:
		return c.data(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			return c.fr.WritePing(true, f.Data)
		}
	case *http2.RSTStreamFrame:
		c.forget(f.StreamID)
	}
	return nil
}

func (c *mbConn) headers(f *http2.MetaHeadersFrame) error {
	s := c.s
	size := uint32(0)
	for _, hf := range f.Fields {
		size += hf.Size()
	}
	if s.maxHeaderList != 0 && size > s.maxHeaderList {
		s.violate("a request header list of %d bytes, over SETTINGS_MAX_HEADER_LIST_SIZE %d", size, s.maxHeaderList)
	}
	id := f.StreamID
	c.streams[id] = c.initial
	c.wantBody[id] = 0
	for _, hf := range f.Fields {
		if hf.Name == "content-length" {
			c.wantBody[id], _ = strconv.ParseInt(hf.Value, 10, 64)
		}
	}
	if s.changeWindow && !c.changed && c.initial == 0 { // a window of 0: no DATA comes before the change
		if err := c.changeSettings(); err != nil {
			return err
		}
	}
	if f.StreamEnded() {
		return c.respond(id)
	}
	return nil
}

func (c *mbConn) data(f *http2.DataFrame) error {
	s := c.s
	id, n := f.StreamID, int64(f.Length)
	if _, ok := c.streams[id]; !ok {
		s.violate("DATA on stream %d, not open", id)
		return nil
	}
	c.conn -= n
	c.streams[id] -= n
	if c.conn < 0 || c.streams[id] < 0 {
		s.violate("DATA of %d bytes on stream %d overran a window: connection %d, stream %d", n, id, c.conn, c.streams[id])
	}
	c.gotBody[id] += int64(len(f.Data()))
	s.bodyBytes.Add(int64(len(f.Data())))
	if s.changeWindow && !c.changed {
		if err := c.changeSettings(); err != nil {
			return err
		}
	}
	// The connection's window is given back only once the client has used
	// it all (a client that waits has: no deadlock), so a client that
	// overruns it is caught, whatever the reads; a stream's as soon as
	// its bytes are read.
	if c.conn == 0 {
		c.conn = 65535
		if err := c.fr.WriteWindowUpdate(0, 65535); err != nil {
			return err
		}
	}
	if n > 0 {
		if !f.StreamEnded() {
			c.streams[id] += n
			if err := c.fr.WriteWindowUpdate(id, uint32(n)); err != nil {
				return err
			}
		}
	}
	if f.StreamEnded() {
		return c.respond(id)
	}
	return nil
}

func (c *mbConn) changeSettings() error {
	c.changed = true
	c.pending = append(c.pending, int64(c.s.newWindow))
	return c.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: c.s.newWindow})
}

func (c *mbConn) forget(id uint32) {
	delete(c.streams, id)
	delete(c.wantBody, id)
	delete(c.gotBody, id)
}

// respond writes the response to stream id: a header block (padded, split
// as the server is told), then "ok".
func (c *mbConn) respond(id uint32) error {
	s := c.s
	if got, want := c.gotBody[id], c.wantBody[id]; got != want {
		s.violate("stream %d: a body of %d bytes, content-length %d", id, got, want)
	}
	c.forget(id)
	c.responses++
	c.block.Reset()
	c.enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	pad := s.pad
	if s.hugeEvery > 0 && c.responses%s.hugeEvery == 0 {
		pad = s.hugeBytes
	}
	// Fields of up to 1000 bytes, their values changing from one response
	// to the next: the encoder indexes them, so a client that loses the
	// HPACK state misreads the responses that follow.
	for i := 0; pad > 0; i++ {
		v := strings.Repeat(strconv.Itoa(c.responses%10), min(pad, 1000))
		c.enc.WriteField(hpack.HeaderField{Name: "x-pad-" + strconv.Itoa(i), Value: v})
		pad -= len(v)
	}
	if err := c.writeBlock(id, []byte(c.block.String())); err != nil {
		return err
	}
	if err := c.fr.WriteData(id, true, []byte("ok")); err != nil {
		return err
	}
	s.answered.Add(1)
	if c.responses == 1 && s.laterHeaderList != 0 {
		return c.fr.WriteSettings(http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: s.laterHeaderList})
	}
	return nil
}

// writeBlock writes a header block as HEADERS and CONTINUATION frames of
// at most s.fragment bytes (and never more than the client's 16384).
func (c *mbConn) writeBlock(id uint32, block []byte) error {
	size := 16384
	if c.s.fragment > 0 {
		size = c.s.fragment
	}
	first := block[:min(size, len(block))]
	rest := block[len(first):]
	err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: first, EndHeaders: len(rest) == 0})
	for err == nil && len(rest) > 0 {
		frag := rest[:min(size, len(rest))]
		rest = rest[len(frag):]
		err = c.fr.WriteContinuation(id, len(rest) == 0, frag)
	}
	return err
}

func misbehaveConfig(t *testing.T, s *h2Misbehave) Config {
	t.Helper()
	cfg := DefaultConfig()
	if err := cfg.SetURL(s.url + "/ok"); err != nil {
		t.Fatal(err)
	}
	cfg.HTTP2, cfg.Streams = true, 8
	// A second: long enough for the connections to come up and carry
	// bodies that wait on the windows on a loaded machine under -race.
	cfg.Concurrency, cfg.Duration, cfg.StatsInterval, cfg.Timeout = 2, time.Second, 500*time.Millisecond, 5*time.Second
	// The drain as long as the timeout: a response with a 1 MiB header
	// block took over the default 1 s to arrive at load 15.
	cfg.Drain = cfg.Timeout
	return cfg
}

// Against a server that breaks each rule a careless HTTP/2 client relies
// on: every request answered (or failed with the kind named), no
// connection lost, and the server saw no frame, window or header list
// overrun.
func TestH2Misbehave(t *testing.T) {
	post := func(n int) func(*Config) {
		return func(c *Config) { c.Method, c.Body = "POST", []byte(strings.Repeat("b", n)) }
	}
	tests := []struct {
		name    string
		srv     *h2Misbehave
		set     func(*Config)
		allowed string // the one error kind allowed, and then required
		redial  bool   // connections end and are replaced (else each lasts the run)
	}{
		{"header block in HEADERS and CONTINUATIONs", &h2Misbehave{fragment: 100, pad: 300}, nil, "", false},
		{"CONTINUATIONs written a byte at a time", &h2Misbehave{fragment: 40, pad: 300, oneByte: true}, nil, "", false},
		{"many CONTINUATIONs", &h2Misbehave{fragment: 1, pad: 2000}, nil, "", false},
		{"header block over the limit fails its stream", &h2Misbehave{fragment: 16384, pad: 300, hugeEvery: 3, hugeBytes: 200 << 10}, nil, "header_too_large", false},
		{"header block over 1 MiB fails its connection", &h2Misbehave{pad: 300, hugeEvery: 3, hugeBytes: 1100 << 10}, nil, "header_too_large", true},
		{"stream window of 1,024, 4 KiB bodies", &h2Misbehave{windowSet: true, initialWindow: 1024}, post(4096), "", false},
		{"connection window of 65,535, 8 streams of 16 KiB", &h2Misbehave{}, post(16 << 10), "", false},
		{"stream window shrinks mid-connection, goes negative", &h2Misbehave{windowSet: true, initialWindow: 1024, changeWindow: true, newWindow: 256}, post(4096), "", false},
		{"stream window opens from 0 by SETTINGS alone", &h2Misbehave{windowSet: true, initialWindow: 0, changeWindow: true, newWindow: 65535}, post(4096), "", false},
		{"DATA split to the default frame size", &h2Misbehave{windowSet: true, initialWindow: 1 << 20}, post(100_000), "", false},
		{"DATA split to a larger frame size", &h2Misbehave{windowSet: true, initialWindow: 1 << 20, maxFrame: 40_000}, post(100_000), "", false},
		{"request headers in CONTINUATIONs", &h2Misbehave{}, func(c *Config) { c.Headers = []string{"x-big: " + strings.Repeat("h", 40_000)} }, "", false},
		{"header list over the server's limit, set mid-connection", &h2Misbehave{laterHeaderList: 100}, nil, "header_too_large", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startH2Misbehave(t, tt.srv)
			cfg := misbehaveConfig(t, s)
			if tt.set != nil {
				tt.set(&cfg)
			}
			_, res, out := runJudged(t, cfg, "")
			checkAccounting(t, res)
			if v := s.violations(); len(v) > 0 {
				t.Errorf("the server saw the client break the rules: %q", v)
			}
			if res.Answered == 0 || res.Unfinished+res.Dropped != 0 {
				t.Fatalf("answered %d, unfinished %d, dropped %d\n%s", res.Answered, res.Unfinished, res.Dropped, out)
			}
			for kind, n := range res.ErrorsByKind {
				if n != 0 && kind != tt.allowed {
					t.Errorf("%d errors of kind %s: want none but %q\n%s", n, kind, tt.allowed, out)
				}
			}
			if tt.allowed != "" && res.ErrorsByKind[tt.allowed] == 0 {
				t.Errorf("no %s error: want some\n%s", tt.allowed, out)
			}
			if !tt.redial && res.ConnectionsOpened != int64(cfg.Concurrency) {
				t.Errorf("%d connections opened, want %d: no connection may be lost\n%s", res.ConnectionsOpened, cfg.Concurrency, out)
			}
			// Replacements back off, doubling from 5 ms: a few a slot in
			// the run, never one per response.
			if most := int64(cfg.Concurrency) * 12; tt.redial && res.ConnectionsOpened > most {
				t.Errorf("%d connections opened, want at most %d: the replacements must back off\n%s", res.ConnectionsOpened, most, out)
			}
		})
	}
}

// A server whose first SETTINGS allow a smaller header list than the
// request's is refused before any load, in one line naming the setting;
// nothing is sent to it.
func TestH2PreflightHeaderList(t *testing.T) {
	s := startH2Misbehave(t, &h2Misbehave{maxHeaderList: 100})
	cfg := misbehaveConfig(t, s)
	_, err := Run(t.Context(), cfg)
	if err == nil || !errors.Is(err, ErrTargetDown) || !strings.Contains(err.Error(), "SETTINGS_MAX_HEADER_LIST_SIZE of 100") || strings.Contains(err.Error(), "\n") {
		t.Errorf("err %v: want the target refused, the server's limit named", err)
	}
	if n := s.answered.Load(); n != 0 || len(s.violations()) != 0 {
		t.Errorf("%d requests answered, violations %q: want none sent", n, s.violations())
	}
}
