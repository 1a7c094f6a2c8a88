package loadtester

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"weaseldb/loadtester/datafeed"
)

// testFeed writes csv to a file and loads it under --data-policy loop.
func testFeed(t testing.TB, csv string) *datafeed.Feed {
	t.Helper()
	path := filepath.Join(t.TempDir(), "d.csv")
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := datafeed.Load(path, datafeed.Loop)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Data values are encoded where they go: one path segment, a form-encoded
// query value, a header and a body as they are, {{json:data.COL}} escaped
// for a JSON string, {{raw:data.COL}} as it is anywhere; the template's
// own text, %XX included, is never re-encoded.
func TestDataValuesEncodedWhereTheyGo(t *testing.T) {
	feed := testFeed(t, "v,r\n\"a b/c?d#e%f&g=h+\"\"é\",a/b%2Fc?d=e&f\n")
	const value, raw = `a b/c?d#e%f&g=h+"é`, "a/b%2Fc?d=e&f"
	for _, tc := range []struct {
		name, path, header, body, want string
	}{
		{"path", "/x%20y/{{data.v}}/z", "", "", "GET /x%20y/a%20b%2Fc%3Fd%23e%25f%26g%3Dh%2B%22%C3%A9/z HTTP/1.1\r\n"},
		{"query", "/q?k={{data.v}}&l=%2F", "", "", "GET /q?k=a+b%2Fc%3Fd%23e%25f%26g%3Dh%2B%22%C3%A9&l=%2F HTTP/1.1\r\n"},
		{"raw in path", "/r/{{raw:data.r}}", "", "", "GET /r/" + raw + " HTTP/1.1\r\n"},
		{"raw in query", "/r?k={{raw:data.r}}", "", "", "GET /r?k=" + raw + " HTTP/1.1\r\n"},
		{"header", "/h", "X-V: {{data.v}}", "", "\r\nX-V: " + value + "\r\n"},
		{"body", "/b", "", "<{{data.v}}>", "\r\n\r\n<" + value + ">"},
		{"json body", "/b", "", `{"v":"{{json:data.v}}"}`, "\r\n\r\n" + `{"v":"a b/c?d#e%f&g=h+\"é"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var headers []string
			if tc.header != "" {
				headers = []string{tc.header}
			}
			tmpl, err := newRequestTemplate("GET", tc.path, "h", headers, []byte(tc.body), placeholders{columns: feed.Column, feed: feed})
			if err != nil {
				t.Fatal(err)
			}
			tmpl.feed = 0
			raw, _, _ := newRenderer(0, 1, 1, 1, []*datafeed.Feed{feed}).appendRequest(nil, tmpl)
			if !strings.Contains(string(raw), tc.want) {
				t.Fatalf("rendered\n%q\nwant it to hold\n%q", raw, tc.want)
			}
		})
	}
}

// A value holding CR, LF or NUL cannot go in a header (it would end it,
// or add one): it is refused before the run, naming the file, the row and
// the column; in a path, a query or the body it is encoded or harmless.
func TestDataHeaderRefusesLineBreaks(t *testing.T) {
	feed := testFeed(t, "id,v\n1,ok\n2,\"x\r\nX-Evil: 1\"\n")
	_, err := newRequestTemplate("GET", "/", "h", []string{"X-V: {{data.v}}"}, nil, placeholders{columns: feed.Column, feed: feed})
	if err == nil || !strings.Contains(err.Error(), feed.Path) || !strings.Contains(err.Error(), "row 2") || !strings.Contains(err.Error(), "column v") {
		t.Fatalf("err %v, want one naming %s, row 2 and column v", err, feed.Path)
	}
	for _, ok := range []struct{ path, body string }{{"/{{data.v}}", ""}, {"/?q={{data.v}}", ""}, {"/", "{{data.v}}"}, {"/", "{{data.id}}"}} {
		if _, err := newRequestTemplate("POST", ok.path, "h", []string{"X-Id: {{data.id}}"}, []byte(ok.body), placeholders{columns: feed.Column, feed: feed}); err != nil {
			t.Errorf("path %q body %q: %v", ok.path, ok.body, err)
		}
	}
}

// A path with a space or a control character is refused, as a workload's
// is: it would break the request line.
func TestPathWithSpaceRefused(t *testing.T) {
	for _, p := range []string{"/a b", "/a\tb", "/a\x01"} {
		cfg := DefaultConfig()
		cfg.Path = p
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--path") {
			t.Errorf("--path %q: err %v, want one naming --path", p, err)
		}
	}
	cfg := DefaultConfig()
	if err := cfg.SetURL("http://h/a b"); err == nil || !strings.Contains(err.Error(), "--url") {
		t.Errorf("--url with a space: err %v, want one naming --url", err)
	}
}

// Rendering requests whose data values are encoded allocates nothing.
func TestRenderEncodedDataAllocatesNothing(t *testing.T) {
	feed := testFeed(t, "v\na b/c\nd&e\n")
	tmpl, err := newRequestTemplate("POST", "/p/{{data.v}}?q={{data.v}}", "h", []string{"X-V: {{data.v}}"},
		[]byte(`{"v":"{{json:data.v}}"}`), placeholders{columns: feed.Column, feed: feed})
	if err != nil {
		t.Fatal(err)
	}
	tmpl.feed = 0
	r := newRenderer(0, 1, 1, 1, []*datafeed.Feed{feed})
	buf := make([]byte, 0, 4096)
	if allocs := testing.AllocsPerRun(100, func() { buf, _, _ = r.appendRequest(buf[:0], tmpl) }); allocs != 0 {
		t.Fatalf("%v allocations per request, want 0", allocs)
	}
}

func BenchmarkRenderEncodedData(b *testing.B) {
	feed := testFeed(b, "v\na b/c\nd&e\n")
	tmpl, _ := newRequestTemplate("POST", "/p/{{data.v}}?q={{data.v}}", "h", nil, []byte(`{"v":"{{json:data.v}}"}`), placeholders{columns: feed.Column, feed: feed})
	tmpl.feed = 0
	r := newRenderer(0, 1, 1, 1, []*datafeed.Feed{feed})
	var buf []byte
	for b.Loop() {
		buf, _, _ = r.appendRequest(buf[:0], tmpl)
	}
}

// The HTTP/2 header list's bound counts a value as it is sent: encoded.
func TestH2BoundCountsEncodedValues(t *testing.T) {
	feed := testFeed(t, "v\n///\n")
	size := func(path string) uint32 {
		cfg := DefaultConfig()
		cfg.HTTP2, cfg.Streams, cfg.Path, cfg.Data = true, 1, path, feed
		reqs, err := newH2Requests(&cfg, "00000000")
		if err != nil {
			t.Fatal(err)
		}
		return reqs.listSize
	}
	if enc, raw := size("/{{data.v}}"), size("/{{raw:data.v}}"); enc-raw != 6 {
		t.Fatalf("bound %d encoded, %d raw: want the 3 slashes' 9 encoded bytes counted (a difference of 6)", enc, raw)
	}
}

// FuzzEncodedValues: any value encoded for a path segment or a query reads
// back as itself (url.PathUnescape, url.QueryUnescape), holds only
// unreserved bytes, %XX and (in a query) +, and is as long as encodedLen
// says; for JSON, it decodes back inside a string.
func FuzzEncodedValues(f *testing.F) {
	for _, s := range []string{"a b/c?d#e%f&g=h+", "é\r\n\x00\"\\", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, tc := range []struct {
			enc    valueEncoding
			decode func(string) (string, error)
		}{{encPathSegment, url.PathUnescape}, {encQuery, url.QueryUnescape}} {
			got := string(appendEncoded(nil, v, tc.enc))
			if len(got) != tc.enc.encodedLen(v) {
				t.Fatalf("%q: %d bytes, encodedLen %d", v, len(got), tc.enc.encodedLen(v))
			}
			if back, err := tc.decode(got); err != nil || back != v {
				t.Fatalf("%q encoded %q reads back %q (%v)", v, got, back, err)
			}
			if strings.ContainsFunc(got, func(r rune) bool { return !(r < 0x80 && (unreserved(byte(r)) || r == '%' || r == '+')) }) {
				t.Fatalf("%q encoded %q: a byte outside unreserved, %%XX and +", v, got)
			}
		}
		if !utf8.ValidString(v) {
			return // a data file is UTF-8 (datafeed refuses any other)
		}
		got := appendEncoded(nil, v, encJSON)
		if len(got) != encJSON.encodedLen(v) {
			t.Fatalf("%q: %d bytes, encodedLen %d", v, len(got), encJSON.encodedLen(v))
		}
		var back string
		if err := json.Unmarshal([]byte(`"`+string(got)+`"`), &back); err != nil || back != v {
			t.Fatalf("%q as JSON %q reads back %q (%v)", v, got, back, err)
		}
	})
}

// {{raw:data.COL}} opts out of encoding, not out of a valid request: a
// value with a space or a control character in the target is refused.
func TestRawTargetValueRefusedWhenItBreaksTheLine(t *testing.T) {
	feed := testFeed(t, "v\nok\n\"a b\"\n")
	for _, path := range []string{"/{{raw:data.v}}", "/?q={{raw:data.v}}"} {
		_, err := newRequestTemplate("GET", path, "h", nil, nil, placeholders{columns: feed.Column, feed: feed})
		if err == nil || !strings.Contains(err.Error(), "row 2") || !strings.Contains(err.Error(), "column v") {
			t.Errorf("%s: err %v, want one naming row 2 and column v", path, err)
		}
	}
}
