package loadtester

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"weaseldb/loadtester/datafeed"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// newH2RenderThread builds a network thread for cfg's HTTP/2 run (kinds,
// checks, data files and requests as Run builds them) and one connection
// to it on a socket pair, its preface written and taken off.
func newH2RenderThread(t testing.TB, cfg Config) (*netThread, *conn) {
	t.Helper()
	cfg.HTTP2, cfg.Streams, cfg.Pipeline = true, 8, 8
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	kinds, table, err := newKinds(&cfg, "run")
	if err != nil {
		t.Fatal(err)
	}
	req, err := newH2Requests(&cfg, "run")
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{cfg: cfg, tmpl: kinds[0].tmpl, kinds: kinds, table: table, base: time.Now(), connReqs: make(chan connRequest, 16), h2req: req}
	r.parseChecks()
	r.feeds = numberFeeds(kinds)
	r.windowEnd.Store(1 << 62)
	r.afterBackoff = func(time.Duration, func()) {}
	th, err := newNetThread(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	r.threads = []*netThread{th}
	t.Cleanup(th.shutdown)
	mine, _ := socketPair(t)
	th.adopt(handoff{fd: mine})
	c := th.conns[0]
	th.finishConnect(c)
	if c.state != connActive {
		t.Fatal("the connection did not come up")
	}
	c.pending = c.pending[:0]
	return th, c
}

// h2Sent is a request as the server reads it.
type h2Sent struct {
	fields map[string]string
	body   []byte
	list   uint32 // its header list's size (§6.5.2)
}

// readH2Requests reads the requests in out (a client's frames after its
// preface and SETTINGS), each header block with a decoder of its own: a
// block that leaned on an earlier one's dynamic table would not decode.
func readH2Requests(t *testing.T, out []byte) []h2Sent {
	t.Helper()
	fr := http2.NewFramer(nil, bytes.NewReader(out))
	fr.MaxHeaderListSize = 1 << 30
	byID := map[uint32]*h2Sent{}
	var ids []uint32
	var block []byte
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			break
		}
		switch f := f.(type) {
		case *http2.HeadersFrame:
			block = append(block[:0], f.HeaderBlockFragment()...)
			if !f.HeadersEnded() {
				continue
			}
		case *http2.ContinuationFrame:
			block = append(block, f.HeaderBlockFragment()...)
			if !f.HeadersEnded() {
				continue
			}
		case *http2.DataFrame:
			byID[f.StreamID].body = append(byID[f.StreamID].body, f.Data()...)
			continue
		default:
			continue
		}
		s := &h2Sent{fields: map[string]string{}}
		dec := hpack.NewDecoder(4096, func(hf hpack.HeaderField) {
			s.fields[hf.Name] = hf.Value
			s.list += hf.Size()
		})
		if _, err := dec.Write(block); err != nil {
			t.Fatalf("a header block that does not decode alone: %v", err)
		}
		id := f.Header().StreamID
		byID[id] = s
		ids = append(ids, id)
	}
	var reqs []h2Sent
	for _, id := range ids {
		reqs = append(reqs, *byID[id])
	}
	return reqs
}

func writeTestFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Rendered HTTP/2 requests carry what HTTP/1.1's would: each request's
// placeholders rendered (one {{seq}} a request, shared by all of its
// places), its data row, a content-length that is its body's, names in
// lower case, every block decodable alone, and a header list within the
// bound the server's limit is checked against.
func TestH2RenderedRequests(t *testing.T) {
	data := writeTestFile(t, "rows.csv", "id,Name\n7,Ann\n8,a-much-longer-name-than-the-others\n9,Bo\n")
	feed, err := datafeed.Load(data, datafeed.Loop)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		set   func(*Config)
		check func(t *testing.T, i int, r h2Sent)
	}{
		{"static", func(c *Config) {}, func(t *testing.T, _ int, r h2Sent) {
			if r.fields[":path"] != "/p" || r.fields[":method"] != "GET" || r.fields["content-length"] != "" {
				t.Errorf("fields %v", r.fields)
			}
		}},
		{"seq in path, header and body", func(c *Config) {
			c.Method, c.Path, c.Headers = "POST", "/p?s={{seq}}", []string{"X-Seq: {{seq}}", "X-Fixed: f"}
			c.Body = []byte(`{"seq":{{seq}},"id":"{{uuid}}","again":"{{uuid}}"}`)
		}, func(t *testing.T, _ int, r h2Sent) {
			seq := strings.TrimPrefix(r.fields[":path"], "/p?s=")
			var uuid string
			if i := bytes.Index(r.body, []byte(`"id":"`)); i >= 0 && len(r.body) >= i+6+36 {
				uuid = string(r.body[i+6 : i+6+36])
			}
			want := `{"seq":` + seq + `,"id":"` + uuid + `","again":"` + uuid + `"}`
			if r.fields["x-seq"] != seq || r.fields["x-fixed"] != "f" || string(r.body) != want || r.fields["content-length"] != strconv.Itoa(len(r.body)) {
				t.Errorf("fields %v, body %q", r.fields, r.body)
			}
		}},
		{"data in path and a header; host", func(c *Config) {
			c.Path, c.Headers, c.Data = "/u?id={{data.id}}", []string{"X-Name: {{data.Name}}", "Host: h-{{seq%3}}"}, feed
		}, func(t *testing.T, i int, r h2Sent) {
			id := []string{"7", "8", "9"}[i%3]
			name := []string{"Ann", "a-much-longer-name-than-the-others", "Bo"}[i%3]
			if r.fields[":path"] != "/u?id="+id || r.fields["x-name"] != name || !strings.HasPrefix(r.fields[":authority"], "h-") {
				t.Errorf("request %d: fields %v", i, r.fields)
			}
		}},
		{"placeholder in a header's name, lower-cased", func(c *Config) {
			c.Headers, c.Data = []string{"X-{{data.Name}}: v"}, feed
		}, func(t *testing.T, i int, r h2Sent) {
			name := "x-" + []string{"ann", "a-much-longer-name-than-the-others", "bo"}[i%3]
			if r.fields[name] != "v" {
				t.Errorf("request %d: fields %v, want %s", i, r.fields, name)
			}
		}},
		{"a static body with a rendered path", func(c *Config) {
			c.Method, c.Path, c.Body = "PUT", "/p/{{seq}}", []byte("same")
		}, func(t *testing.T, _ int, r h2Sent) {
			if string(r.body) != "same" || r.fields["content-length"] != "4" {
				t.Errorf("fields %v, body %q", r.fields, r.body)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Path = "/p"
			tt.set(&cfg)
			th, c := newH2RenderThread(t, cfg)
			if _, static := c.proto.(h2Static); static != (tt.name == "static") {
				t.Fatalf("protocol %T", c.proto)
			}
			var out []byte
			for range 3 { // 24 requests, as the closed loop sends them
				b, n := c.proto.batch(th, c, 8)
				if n != 8 {
					t.Fatalf("batch of %d", n)
				}
				out = append(out, b...)
				c.sent += n
			}
			reqs := readH2Requests(t, out)
			if len(reqs) != 24 {
				t.Fatalf("%d requests read, want 24", len(reqs))
			}
			seqs := map[string]bool{}
			for i, r := range reqs {
				tt.check(t, i, r)
				if r.list > th.r.h2req.listSize {
					t.Errorf("request %d: header list %d, over the bound %d", i, r.list, th.r.h2req.listSize)
				}
				if tt.name == "static" && r.list != th.r.h2req.listSize {
					t.Errorf("static: header list %d, bound %d: want it exact", r.list, th.r.h2req.listSize)
				}
				if s := r.fields["x-seq"]; s != "" {
					if seqs[s] {
						t.Errorf("{{seq}} %s twice", s)
					}
					seqs[s] = true
				}
				for name := range r.fields {
					if name != strings.ToLower(name) {
						t.Errorf("field name %q not in lower case", name)
					}
				}
			}
		})
	}
}

// A workload over HTTP/2 picks each request's kind in turn and notes it,
// with its {{seq}}, in the ring; {{answered:KIND}} renders the seq of the
// latest answered request of KIND once there is one. Under --data-policy
// once a batch stops short when the rows run out.
func TestH2WorkloadKindsAndRowsOut(t *testing.T) {
	w, err := ParseWorkload([]byte(`
[[request]]
name = "put"
method = "POST"
path = "/put/{{seq}}"
body = "{{data.id}}"

[[request]]
name = "get"
path = "/get?of={{answered:put}}"
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Workload = w
	cfg.Data, err = datafeed.Load(writeTestFile(t, "ids.csv", "id\na\nb\nc\n"), datafeed.Once)
	if err != nil {
		t.Fatal(err)
	}
	th, c := newH2RenderThread(t, cfg)
	out, n := c.proto.batch(th, c, 8)
	if n != 6 { // put, get, put, get, put, get: then a put finds no row
		t.Fatalf("batch of %d, want 6 (3 rows, a get after each put)", n)
	}
	reqs := readH2Requests(t, out)
	var paths, bodies []string
	for _, r := range reqs {
		paths = append(paths, r.fields[":path"])
		bodies = append(bodies, string(r.body))
	}
	if slices.Compare(bodies, []string{"a", "", "b", "", "c", ""}) != 0 {
		t.Errorf("bodies %q", bodies)
	}
	for i := range n {
		if want := uint8(i % 2); c.kinds[i] != want {
			t.Errorf("ring entry %d: kind %d, want %d", i, c.kinds[i], want)
		}
		// Nothing answered yet: a get renders its own {{seq}}.
		if want := strconv.FormatUint(c.seqs[i], 10); !strings.HasSuffix(paths[i], "/"+want) && !strings.HasSuffix(paths[i], "="+want) {
			t.Errorf("request %d %s: want its own seq %s", i, paths[i], want)
		}
	}
	c.sent += n
	kindNext := th.kindNext
	if _, n := c.proto.batch(th, c, 2); n != 0 || th.kindNext != kindNext {
		t.Errorf("a batch with no row left sent %d and moved the kinds on %d: want none", n, th.kindNext-kindNext)
	}
}

// The header list's bound: a rendered request never exceeds it, and a
// server whose SETTINGS_MAX_HEADER_LIST_SIZE it passes is refused before
// any load, in one line.
func TestH2ListBound(t *testing.T) {
	feed, err := datafeed.Load(writeTestFile(t, "rows.csv", "v\nshort\n"+strings.Repeat("x", 300)+"\n"), datafeed.Loop)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Path, cfg.Headers, cfg.Data = "/p", []string{"X-V: {{data.v}}", "X-Id: {{uuid}}-{{seq}}"}, feed
	req, err := newH2Requests(&cfg, "run")
	if err != nil {
		t.Fatal(err)
	}
	// :method GET, :scheme http, :authority, :path /p, x-v (300 at most), x-id (36 + 1 + 20).
	want := uint32(32*6 + len(":method") + 3 + len(":scheme") + 4 + len(":authority") + len(cfg.hostHeader()) +
		len(":path") + 2 + len("x-v") + 300 + len("x-id") + 36 + 1 + 20)
	if req.listSize != want {
		t.Errorf("bound %d, want %d", req.listSize, want)
	}
	var settings bytes.Buffer
	http2.NewFramer(&settings, nil).WriteSettings(http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: want - 1})
	f, err := http2.NewFramer(nil, &settings).ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	if err := h2SettingsAllow(f.(*http2.SettingsFrame), req); err == nil || !strings.Contains(err.Error(), "up to "+strconv.Itoa(int(want))) || strings.Contains(err.Error(), "\n") {
		t.Errorf("refusal %v", err)
	}
}

// Steady state sends allocate nothing, static or rendered: the rendered
// block is encoded into the thread's scratch, and a body that must wait
// for a window reuses its ring entry's buffer.
func TestH2SendAllocatesNothing(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  func(*Config)
	}{
		{"static", func(c *Config) {}},
		{"rendered", func(c *Config) {
			c.Method, c.Path, c.Headers, c.Body = "POST", "/p/{{seq}}", []string{"X-Id: {{uuid}}"}, []byte(`{"seq":{{seq}}}`)
		}},
		{"rendered body waiting for windows", func(c *Config) {
			c.Method, c.Path, c.Body = "POST", "/p/{{seq}}", append([]byte("{{seq}}"), make([]byte, 40<<10)...)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.set(&cfg)
			th, c := newH2RenderThread(t, cfg)
			h := c.h2
			cycle := func() {
				_, n := c.proto.batch(th, c, 8)
				for j := range n { // the server ends each stream at once: ring entries are reused
					i := (c.sent + j) & c.mask
					h.dropBody(i)
					h.done[i] = true
				}
				c.sent += n
				h.open -= n
				h.send.connWin = h2DefaultWindow // a body waits once the window is spent
			}
			cycle()
			if allocs := testing.AllocsPerRun(50, cycle); allocs != 0 {
				t.Errorf("%.1f allocations per batch of 8", allocs)
			}
		})
	}
}

// What writing a request costs over HTTP/2, per request: the static one
// (its block encoded once) and rendered ones (a {{seq}} in the path and a
// {{uuid}} header; the same with a 1 KiB rendered body). Run with
// go test -run - -bench H2Send ./loadtester.
func BenchmarkH2Send(b *testing.B) {
	for _, bc := range []struct {
		name string
		set  func(*Config)
	}{
		{"static", func(c *Config) {}},
		{"rendered", func(c *Config) { c.Path, c.Headers = "/ok?s={{seq}}", []string{"X-Id: {{uuid}}"} }},
		{"rendered body 1KiB", func(c *Config) {
			c.Method, c.Path, c.Body = "POST", "/ok?s={{seq}}", append([]byte(`{"seq":{{seq}},"pad":"`), bytes.Repeat([]byte("x"), 1000)...)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Path = "/ok"
			bc.set(&cfg)
			th, c := newH2RenderThread(b, cfg)
			h := c.h2
			b.ReportAllocs()
			b.ResetTimer()
			for sent := 0; sent < b.N; sent += 8 {
				_, n := c.proto.batch(th, c, 8)
				for j := range n {
					i := (c.sent + j) & c.mask
					h.dropBody(i)
					h.done[i] = true
				}
				c.sent += n
				h.open -= n
				h.send.connWin = h2MaxWindow
			}
		})
	}
}
