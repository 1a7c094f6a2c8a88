package loadtester

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
)

// Placeholders substituted per request when they appear in a header value or
// the body. Without them the request bytes are formatted once and every send
// copies nothing.
const (
	placeholderSeq  = "{{seq}}"
	placeholderUUID = "{{uuid}}"
)

// requestTemplate renders requests. A static template holds the finished
// bytes; a dynamic one keeps the head and body split into literal and
// placeholder segments, rendered per request into the connection's buffer.
type requestTemplate struct {
	static  []byte // the whole request, when nothing is substituted
	head    []segment
	body    []segment
	hasBody bool
}

type segmentKind uint8

const (
	segLiteral segmentKind = iota
	segSeq
	segUUID
)

type segment struct {
	kind    segmentKind
	literal []byte
}

// newRequestTemplate formats "METHOD target HTTP/1.1" with Host, the user's
// headers, and Content-Length when there is a body.
func newRequestTemplate(method, target, host string, headers []string, body []byte) (*requestTemplate, error) {
	var head bytes.Buffer
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\n", method, target)
	hasHost := false
	for _, h := range headers {
		name, _, ok := bytes.Cut([]byte(h), []byte(":"))
		if !ok || len(bytes.TrimSpace(name)) == 0 {
			return nil, fmt.Errorf("header %q: want \"Name: value\"", h)
		}
		if bytes.EqualFold(bytes.TrimSpace(name), []byte("host")) {
			hasHost = true
		}
	}
	if !hasHost {
		fmt.Fprintf(&head, "Host: %s\r\n", host)
	}
	for _, h := range headers {
		head.WriteString(h)
		head.WriteString("\r\n")
	}
	hasBody := len(body) > 0 || method == "POST" || method == "PUT" || method == "PATCH"
	t := &requestTemplate{hasBody: hasBody}
	if !hasPlaceholder(head.Bytes()) && !hasPlaceholder(body) {
		if hasBody {
			fmt.Fprintf(&head, "Content-Length: %d\r\n", len(body))
		}
		head.WriteString("\r\n")
		head.Write(body)
		t.static = head.Bytes()
		return t, nil
	}
	t.head = splitSegments(head.Bytes())
	t.body = splitSegments(body)
	return t, nil
}

func hasPlaceholder(b []byte) bool {
	return bytes.Contains(b, []byte(placeholderSeq)) || bytes.Contains(b, []byte(placeholderUUID))
}

func splitSegments(b []byte) []segment {
	var segs []segment
	for len(b) > 0 {
		i := bytes.Index(b, []byte("{{"))
		if i < 0 {
			segs = append(segs, segment{literal: b})
			break
		}
		rest := b[i:]
		switch {
		case bytes.HasPrefix(rest, []byte(placeholderSeq)):
			segs = appendLiteral(segs, b[:i])
			segs = append(segs, segment{kind: segSeq})
			b = rest[len(placeholderSeq):]
		case bytes.HasPrefix(rest, []byte(placeholderUUID)):
			segs = appendLiteral(segs, b[:i])
			segs = append(segs, segment{kind: segUUID})
			b = rest[len(placeholderUUID):]
		default:
			segs = appendLiteral(segs, b[:i+2])
			b = rest[2:]
		}
	}
	return segs
}

func appendLiteral(segs []segment, b []byte) []segment {
	if len(b) == 0 {
		return segs
	}
	if n := len(segs); n > 0 && segs[n-1].kind == segLiteral {
		segs[n-1].literal = append(segs[n-1].literal[:len(segs[n-1].literal):len(segs[n-1].literal)], b...)
		return segs
	}
	return append(segs, segment{literal: b})
}

// dynamic reports whether requests differ from one another.
func (t *requestTemplate) dynamic() bool { return t.static == nil }

// renderer holds one network thread's scratch state for dynamic requests.
type renderer struct {
	seq    uint64 // next sequence number of this thread
	stride uint64 // number of threads: sequences interleave, so they are unique per run
	rng    *rand.ChaCha8
	body   []byte
}

func newRenderer(thread, threads int, seed uint64) *renderer {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
		s[8+i] = byte(uint64(thread) >> (8 * i))
	}
	return &renderer{seq: uint64(thread), stride: uint64(threads), rng: rand.NewChaCha8(s)}
}

// appendRequest appends one request to dst. Only dynamic templates reach
// here; static ones are written straight from t.static.
func (r *renderer) appendRequest(dst []byte, t *requestTemplate) []byte {
	seq := r.seq
	r.seq += r.stride
	var uuid [36]byte
	uuidDone := false
	render := func(dst []byte, segs []segment) []byte {
		for _, s := range segs {
			switch s.kind {
			case segLiteral:
				dst = append(dst, s.literal...)
			case segSeq:
				dst = strconv.AppendUint(dst, seq, 10)
			case segUUID:
				if !uuidDone {
					r.formatUUID(&uuid)
					uuidDone = true
				}
				dst = append(dst, uuid[:]...)
			}
		}
		return dst
	}
	r.body = render(r.body[:0], t.body)
	dst = render(dst, t.head)
	if t.hasBody {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(r.body)), 10)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	return append(dst, r.body...)
}

// formatUUID writes a random (version 4) UUID; one value per request, shared
// by every {{uuid}} in it so a header and the body can carry the same id.
func (r *renderer) formatUUID(out *[36]byte) {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := r.rng.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hexDigits = "0123456789abcdef"
	o := 0
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[o] = '-'
			o++
		}
		out[o], out[o+1] = hexDigits[c>>4], hexDigits[c&0xf]
		o += 2
	}
}
