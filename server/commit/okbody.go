package commit

import (
	"bytes"
	"fmt"
)

// plainOKBody is GET /ok's body by default, and the smallest one.
const plainOKBody = `{"status":"ok"}`

// padOKBody is the shortest body with a pad field, {"status":"ok","pad":""}.
const padOKBody = `{"status":"ok","pad":""}`

// OKBody returns a JSON object of exactly n bytes for GET /ok
// (benchmark.ok_body_bytes): {"status":"ok"} itself for 15, padded with
// spaces before the closing brace up to 23 bytes, and with a "pad" string
// of 'x's from 24 bytes on. Built once when the pipeline starts.
func OKBody(n int) ([]byte, error) {
	switch {
	case n < len(plainOKBody):
		return nil, fmt.Errorf("ok body: %d bytes is below the %d of %s", n, len(plainOKBody), plainOKBody)
	case n < len(padOKBody):
		b := make([]byte, 0, n)
		b = append(b, plainOKBody[:len(plainOKBody)-1]...)
		b = append(b, bytes.Repeat([]byte(" "), n-len(plainOKBody))...)
		return append(b, '}'), nil
	default:
		b := make([]byte, 0, n)
		b = append(b, padOKBody[:len(padOKBody)-2]...)
		b = append(b, bytes.Repeat([]byte("x"), n-len(padOKBody))...)
		return append(b, `"}`...), nil
	}
}

// okResponse is GET /ok's answer for r: without a request id, the shared
// one of r's framing (framed now if this is its first). persist inlines
// its common case, a framing met before.
func (cp *Pipeline[C]) okResponse(r *Reply[C]) []byte {
	if r.RequestID != nil {
		return cp.opt.Responder.AppendResponse(nil, r, 200, "application/json", cp.okBody)
	}
	resp := cp.okResponses[r.Framing]
	if resp == nil {
		resp = cp.opt.Responder.AppendResponse(nil, r, 200, "application/json", cp.okBody)
		cp.okResponses[r.Framing] = resp
	}
	return resp
}
