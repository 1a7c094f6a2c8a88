package check

import (
	"strings"
	"testing"
)

func TestChecks(t *testing.T) {
	ok := &Response{Status: 200, Header: []byte("Content-Type: application/json\r\nX-Id: abc\r\n"), Body: []byte(`{"status":"ok","count":3,"items":[1,2]}`)}
	wrong := &Response{Status: 200, Header: []byte("Content-Type: text/plain\r\n"), Body: []byte(`{"status":"error","count":0,"items":[]}`)}
	notJSON := &Response{Status: 503, Body: []byte("busy")}
	for _, tc := range []struct {
		expr                  string
		ok, wrong, notJSON    bool
		needsBody, needsHeads bool
	}{
		{"status==200", true, true, false, false, false},
		{"status != 503", true, true, false, false, false},
		{"status in 200..299", true, true, false, false, false},
		{"status >= 500", false, false, true, false, false},
		{`body contains "ok"`, true, false, false, true, false},
		{`body !contains "error"`, true, false, true, true, false},
		{`body ~ "count":[1-9]`, true, false, false, true, false},
		{"body !~ ^busy$", true, true, false, true, false},
		{"header[Content-Type] ~ json", true, false, false, false, true},
		{`header[x-id] == "abc"`, true, false, false, false, true},
		{`json.status == "ok"`, true, false, false, true, false},
		{"json.status == ok", true, false, false, true, false},
		{"json.count > 0", true, false, false, true, false},
		{"json.count == 3", true, false, false, true, false},
		{"json.items.# >= 1", true, false, false, true, false},
		{"json.missing != 1", false, false, false, true, false},
	} {
		c, err := Parse(tc.expr)
		if err != nil {
			t.Fatalf("%q: %v", tc.expr, err)
		}
		for _, r := range []struct {
			name string
			resp *Response
			want bool
		}{{"ok", ok, tc.ok}, {"wrong", wrong, tc.wrong}, {"not JSON", notJSON, tc.notJSON}} {
			if got := c.Pass(r.resp); got != r.want {
				t.Errorf("%q on the %s response: %v, want %v", tc.expr, r.name, got, r.want)
			}
		}
		if n := c.Needs(); n.Body != tc.needsBody || n.Header != tc.needsHeads {
			t.Errorf("%q needs %+v", tc.expr, n)
		}
	}
}

func TestBadChecks(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"", "want status, body"},
		{"status", "want an operator"},
		{"status ==", "want a value"},
		{"status == abc", "want a status code"},
		{"status in 300..200", "LOW..HIGH"},
		{"status contains 2", "operator contains"},
		{"body ~ (", "regular expression"},
		{"body < 3", "for text"},
		{`body == "bad\q"`, "malformed quoted"},
		{"header[] ~ x", "header name"},
		{"json. == 1", "want a path"},
		{"json.items.#(a==1 == 1", "unclosed ("},
		{"json.a] == 1", "unbalanced ]"},
		{"json.a in 1..2", "only for status"},
		{"latency < 3", `subject "latency"`},
	} {
		_, err := Parse(tc.expr)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "--check ") {
			t.Errorf("%q: error %v, want one naming --check and %q", tc.expr, err, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"status==200", `body contains "ok"`, "header[A] ~ b", "json.a.#(b==1).c >= 2", "body ~ [", "status in 1..2"} {
		f.Add(s, []byte(`{"a":[{"b":1,"c":3}]}`))
	}
	f.Fuzz(func(t *testing.T, expr string, body []byte) {
		c, err := Parse(expr)
		if err != nil {
			return
		}
		c.Pass(&Response{Status: 200, Header: body, Body: body})
	})
}

func BenchmarkStatusCheck(b *testing.B) {
	c, _ := Parse("status==200")
	r := &Response{Status: 200}
	b.ReportAllocs()
	for b.Loop() {
		c.Pass(r)
	}
}

func BenchmarkJSONCheck(b *testing.B) {
	c, _ := Parse(`json.status == "ok"`)
	r := &Response{Status: 200, Body: []byte(`{"status":"ok","count":3}`)}
	b.ReportAllocs()
	for b.Loop() {
		c.Pass(r)
	}
}
