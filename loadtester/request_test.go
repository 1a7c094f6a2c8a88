package loadtester

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestRequestTemplate(t *testing.T) {
	tests := []struct {
		name, method, body string
		headers            []string
		dynamic            bool
		wantInHead         []string
	}{
		{"get", "GET", "", nil, false, []string{"GET /p HTTP/1.1", "Host: h:1"}},
		{"post static", "POST", `{"a":1}`, []string{"Content-Type: application/json"}, false, []string{"Content-Length: 7", "Content-Type: application/json"}},
		{"post empty", "POST", "", nil, false, []string{"Content-Length: 0"}},
		{"host overridden", "GET", "", []string{"host: other"}, false, []string{"host: other"}},
		{"seq in body", "POST", `{"id":"{{seq}}"}`, nil, true, nil},
		{"uuid in header", "GET", "", []string{"X-Request-Id: {{uuid}}"}, true, nil},
		{"unknown braces kept", "POST", `{{x}}`, nil, false, []string{"Content-Length: 5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := newRequestTemplate(tt.method, "/p", "h:1", tt.headers, []byte(tt.body), placeholders{})
			if err != nil {
				t.Fatal(err)
			}
			if tmpl.dynamic() != tt.dynamic {
				t.Fatalf("dynamic %v, want %v", tmpl.dynamic(), tt.dynamic)
			}
			raw := tmpl.static
			if tmpl.dynamic() {
				raw, _, _ = newRenderer(0, 1, 1, 1, nil).appendRequest(nil, tmpl)
			}
			for _, want := range tt.wantInHead {
				if !bytes.Contains(raw, []byte(want+"\r\n")) {
					t.Errorf("request %q lacks %q", raw, want)
				}
			}
			if strings.Count(string(raw), "Host:")+strings.Count(string(raw), "host:") != 1 {
				t.Errorf("request %q: want exactly one Host header", raw)
			}
			// net/http must read it back, body included.
			req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
			if err != nil {
				t.Fatalf("net/http cannot read %q: %v", raw, err)
			}
			body, _ := io.ReadAll(req.Body)
			if !tt.dynamic && string(body) != tt.body {
				t.Errorf("body %q, want %q", body, tt.body)
			}
		})
	}
}

func TestRendererSubstitutes(t *testing.T) {
	tmpl, err := newRequestTemplate("POST", "/v1/commit", "h", []string{"X-Request-Id: {{uuid}}"}, []byte(`{"request_id":"{{uuid}}","n":{{seq}}}`), placeholders{})
	if err != nil {
		t.Fatal(err)
	}
	r0, r1 := newRenderer(0, 2, 1, 7, nil), newRenderer(1, 2, 1, 7, nil)
	seen := map[string]bool{}
	for i := range 100 {
		r := r0
		if i%2 == 1 {
			r = r1
		}
		raw, _, _ := r.appendRequest(nil, tmpl)
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		body, _ := io.ReadAll(req.Body)
		id := req.Header.Get("X-Request-Id")
		if len(id) != 36 || !bytes.Contains(body, []byte(`"request_id":"`+id+`"`)) {
			t.Fatalf("header id %q and body %s should carry the same uuid", id, body)
		}
		if seen[id] || seen[string(body)] {
			t.Fatalf("repeat: %q", raw)
		}
		seen[id], seen[string(body)] = true, true
	}
}

func BenchmarkRenderDynamic(b *testing.B) {
	tmpl, _ := newRequestTemplate("POST", "/v1/commit", "h", nil, []byte(`{"request_id":"{{uuid}}"}`), placeholders{})
	r := newRenderer(0, 1, 1, 1, nil)
	var buf []byte
	for b.Loop() {
		buf, _, _ = r.appendRequest(buf[:0], tmpl)
	}
}

// FuzzRequestTemplate: any body, placeholders or not, renders a request
// whose Content-Length matches the body net/http reads back.
func FuzzRequestTemplate(f *testing.F) {
	f.Add([]byte(`{"id":"{{seq}}"}`))
	f.Add([]byte(`{{uuid}}{{`))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, body []byte) {
		tmpl, err := newRequestTemplate("POST", "/v1/commit", "h", nil, body, placeholders{})
		if err != nil {
			// Only a placeholder begun and not finished is refused.
			if !bytes.Contains(body, []byte(placeholderSeqMod)) && !bytes.Contains(body, []byte(placeholderAnswered)) {
				t.Fatalf("%q refused: %v", body, err)
			}
			return
		}
		raw := tmpl.static
		if tmpl.dynamic() {
			raw, _, _ = newRenderer(0, 1, 1, 1, nil).appendRequest(nil, tmpl)
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		got, err := io.ReadAll(req.Body)
		if err != nil || int64(len(got)) != req.ContentLength {
			t.Fatalf("body %d bytes, Content-Length %d, err %v", len(got), req.ContentLength, err)
		}
		if !tmpl.dynamic() && !bytes.Equal(got, body) {
			t.Fatalf("static body changed: %q -> %q", body, got)
		}
	})
}
