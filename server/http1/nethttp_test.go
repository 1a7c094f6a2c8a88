package http1

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"testing"
)

// Every request this parser accepts in the table, net/http reads the same
// way (method, target, version, keep-alive, body). Refusals are not compared:
// this parser is deliberately stricter (see docs/http1.md).
// netHTTPDiffers names the accepted cases where net/http is stricter than
// RFC 9112 allows.
var netHTTPDiffers = map[string]bool{
	"leading empty lines":        true, // §2.2: a server SHOULD ignore at least one
	"chunk size, BWS, extension": true, // §7.1.1: BWS before ';' is allowed
}

func TestAcceptedRequestsMatchNetHTTP(t *testing.T) {
	for _, tc := range parseCases {
		in := []byte(tc.in)
		got := parseStream(newTestParser(), in, []int{len(in)})
		if len(got) == 0 || got[0].Status != 0 || netHTTPDiffers[tc.name] {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			br := bufio.NewReader(bytes.NewReader(in))
			for i, want := range got {
				if want.Status != 0 {
					return
				}
				req, err := http.ReadRequest(br)
				if err != nil {
					t.Fatalf("request %d: net/http refused what we accepted: %v", i, err)
				}
				body, err := io.ReadAll(req.Body)
				if err != nil {
					t.Fatalf("request %d: body: %v", i, err)
				}
				keepAlive := !req.Close
				if req.Method != want.Method || req.RequestURI != want.Target || string(body) != want.Body ||
					keepAlive != want.KeepAlive || req.ProtoMinor != int(want.Version)-10 {
					t.Errorf("request %d: net/http read %s %s 1.%d keepAlive=%v body=%q; we read %+v",
						i, req.Method, req.RequestURI, req.ProtoMinor, keepAlive, body, want)
				}
			}
		})
	}
}
