package loadtester

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"

	"weaseldb/loadtester/datafeed"
)

// Placeholders substituted per request when they appear in the path, a
// header value or the body. Without them the request bytes are formatted
// once and every send copies nothing.
//
//	{{seq}}            a number unique within the run
//	{{seq%N}}          that number modulo N (N >= 1): ids that repeat every N requests
//	{{uuid}}           a random version-4 UUID, the same for every {{uuid}} of one request
//	{{run}}            eight hex digits drawn once per run, the same in every request
//	{{answered:KIND}}  (workloads) the {{seq}} of the latest request of kind KIND
//	                   this network thread got a 2xx answer to (below)
//	{{data.COLUMN}}    the value of COLUMN in the request's row of its data
//	                   file (--data, or data = ... per kind): one row per
//	                   request, shared by every {{data...}} in it; encoded
//	                   where it goes (encode.go)
//	{{json:data.COLUMN}} that value escaped for a JSON string
//	{{raw:data.COLUMN}}  that value as it is, even in a path or a query
//
// {{answered:KIND}} lets one kind ask about what another created: a
// GET /v1/status?request_id=c-{{answered:commit}} asks about a commit
// whose body used request_id c-{{seq}} and which the server has answered,
// so the id exists. Until the thread has such an answer it renders the
// request's own {{seq}}, which no other request carries: the question is
// then about an id nobody will use (weaseldb answers not_found and bans
// it, harming no commit), never about one a commit in flight is about to
// use.
const (
	placeholderSeq      = "{{seq}}"
	placeholderUUID     = "{{uuid}}"
	placeholderSeqMod   = "{{seq%"
	placeholderAnswered = "{{answered:"
	placeholderData     = "{{data."
	placeholderRawData  = "{{raw:data."
	placeholderJSONData = "{{json:data."
	placeholderRun      = "{{run}}" // replaced once, before the template is built (newKinds)
)

// requestTemplate renders requests. A static template holds the finished
// bytes; a dynamic one keeps the head and body split into literal and
// placeholder segments, rendered per request into the connection's buffer.
type requestTemplate struct {
	static  []byte // the whole request, when nothing is substituted
	head    []segment
	body    []segment
	hasBody bool
	// feed is the index of the run's data file the request takes a row
	// of (runner.feeds), or -1 when it names no {{data.COLUMN}}.
	feed int
}

type segmentKind uint8

const (
	segLiteral segmentKind = iota
	segSeq
	segUUID
	segSeqMod
	segAnswered
	segData
)

type segment struct {
	kind    segmentKind
	literal []byte
	n       uint64        // segSeqMod: the modulus; segAnswered: the kind referred to; segData: the column
	enc     valueEncoding // segData: how its value is written (encode.go)
}

// kindResolver finds the kind a {{answered:NAME}} names (nil: there are no
// kinds, the placeholder is refused).
type kindResolver func(name string) (int, error)

// columnResolver finds the column a {{data.COLUMN}} names in the request's
// data file (nil: it has none, the placeholder is refused).
type columnResolver func(name string) (int, error)

// placeholders resolves the names placeholders refer to.
type placeholders struct {
	kinds   kindResolver
	columns columnResolver
	// feed, when set, is the data file columns resolves in: a column
	// written as it is in a header or a target is checked against it for
	// values that would break the request (rawSafe).
	feed *datafeed.Feed
}

// newRequestTemplate formats "METHOD target HTTP/1.1" with Host, the user's
// headers, and Content-Length when there is a body.
func newRequestTemplate(method, target, host string, headers []string, body []byte, ph placeholders) (*requestTemplate, error) {
	var head bytes.Buffer
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\n", method, target)
	line := head.Len() // the request line, split apart: its target encodes data as a target does
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
	t := &requestTemplate{hasBody: hasBody, feed: -1}
	var headSegs []segment
	for _, part := range []struct {
		text []byte
		at   where
	}{{head.Bytes()[:len(method)+1], inHeader}, {[]byte(target), inTarget}, {head.Bytes()[len(method)+1+len(target) : line], inHeader}, {head.Bytes()[line:], inHeader}} {
		segs, err := splitSegments(part.text, ph, part.at)
		if err != nil {
			return nil, err
		}
		for _, sg := range segs {
			if sg.kind == segLiteral {
				headSegs = appendLiteral(headSegs, sg.literal)
			} else {
				headSegs = append(headSegs, sg)
			}
		}
	}
	bodySegs, err := splitSegments(body, ph, inBody)
	if err != nil {
		return nil, err
	}
	if !dynamicSegments(headSegs) && !dynamicSegments(bodySegs) {
		if hasBody {
			fmt.Fprintf(&head, "Content-Length: %d\r\n", len(body))
		}
		head.WriteString("\r\n")
		head.Write(body)
		t.static = head.Bytes()
		return t, nil
	}
	t.head, t.body = headSegs, bodySegs
	return t, nil
}

func dynamicSegments(segs []segment) bool {
	for _, s := range segs {
		if s.kind != segLiteral {
			return true
		}
	}
	return false
}

// usesData reports whether segs name a {{data.COLUMN}}.
func usesData(segs ...[]segment) bool {
	for _, list := range segs {
		for _, s := range list {
			if s.kind == segData {
				return true
			}
		}
	}
	return false
}

// splitSegments cuts b into literals and placeholders. A "{{" that starts
// no placeholder stays literal; one that starts {{seq%, {{answered: or
// {{data. but does not finish it is an error, never silently sent as text.
//
// at is where b sits, which picks how a {{data.COLUMN}} value is encoded
// (encode.go): in a target, as a path segment until the template's first
// "?", form-encoded after it.
func splitSegments(b []byte, ph placeholders, at where) ([]segment, error) {
	var segs []segment
	query := false
	for len(b) > 0 {
		i := bytes.Index(b, []byte("{{"))
		if i < 0 {
			segs = appendLiteral(segs, b)
			break
		}
		query = query || bytes.IndexByte(b[:i], '?') >= 0
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
		case bytes.HasPrefix(rest, []byte(placeholderSeqMod)):
			arg, after, err := placeholderArg(rest, placeholderSeqMod)
			if err != nil {
				return nil, err
			}
			n, err := strconv.ParseUint(arg, 10, 64)
			if err != nil || n == 0 {
				return nil, fmt.Errorf("{{seq%%%s}}: want {{seq%%N}} with N a whole number >= 1", arg)
			}
			segs = appendLiteral(segs, b[:i])
			segs = append(segs, segment{kind: segSeqMod, n: n})
			b = after
		case bytes.HasPrefix(rest, []byte(placeholderAnswered)):
			arg, after, err := placeholderArg(rest, placeholderAnswered)
			if err != nil {
				return nil, err
			}
			if ph.kinds == nil {
				return nil, fmt.Errorf("{{answered:%s}}: only in a workload (--workload), which names its kinds", arg)
			}
			k, err := ph.kinds(arg)
			if err != nil {
				return nil, err
			}
			segs = appendLiteral(segs, b[:i])
			segs = append(segs, segment{kind: segAnswered, n: uint64(k)})
			b = after
		case dataPrefix(rest) != "":
			prefix := dataPrefix(rest)
			arg, after, err := placeholderArg(rest, prefix)
			if err != nil {
				return nil, err
			}
			if ph.columns == nil {
				return nil, fmt.Errorf("{{data.%s}}: no data file to read it from (give --data FILE.csv, or data = \"FILE.csv\" in the workload's kind)", arg)
			}
			col, err := ph.columns(arg)
			if err != nil {
				return nil, err
			}
			enc := dataEncoding(prefix, at, query)
			if enc == encRaw && at != inBody {
				if err := rawSafe(ph.feed, col, arg, at); err != nil {
					return nil, err
				}
			}
			segs = appendLiteral(segs, b[:i])
			segs = append(segs, segment{kind: segData, n: uint64(col), enc: enc})
			b = after
		default:
			segs = appendLiteral(segs, b[:i+2])
			b = rest[2:]
		}
	}
	return segs, nil
}

// dataPrefix is the {{data. form rest starts with, or "".
func dataPrefix(rest []byte) string {
	for _, p := range []string{placeholderData, placeholderRawData, placeholderJSONData} {
		if bytes.HasPrefix(rest, []byte(p)) {
			return p
		}
	}
	return ""
}

// dataEncoding is how a value of the {{data. form prefix is written at
// where it sits (query: after the target's "?").
func dataEncoding(prefix string, at where, query bool) valueEncoding {
	switch {
	case prefix == placeholderRawData:
		return encRaw
	case prefix == placeholderJSONData:
		return encJSON
	case at == inTarget && query:
		return encQuery
	case at == inTarget:
		return encPathSegment
	}
	return encRaw
}

// targetBreakers are the bytes no request target may hold: a space and
// the ASCII controls.
const targetBreakers = " \x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f"

// rawSafe refuses a column whose values, written as they are, would break
// the request: in a header one with CR or LF would end it (and could add
// another), NUL is never allowed; in a target ({{raw:data.C}}) a space or
// a control character would end the request line.
func rawSafe(feed *datafeed.Feed, col int, name string, at where) error {
	if feed == nil {
		return nil
	}
	if at == inTarget {
		if row, ok := feed.FindAny(col, targetBreakers); ok {
			return fmt.Errorf("{{raw:data.%s}} in the path: %s row %d, column %s holds a space or control character, which would break the request line; use {{data.%s}}, which encodes it", name, feed.Path, row, name, name)
		}
		return nil
	}
	if row, ok := feed.FindAny(col, "\r\n\x00"); ok {
		return fmt.Errorf("{{data.%s}} in a header: %s row %d, column %s holds a CR, LF or NUL, which would break the header; fix the file or send the value in the body", name, feed.Path, row, name)
	}
	return nil
}

// placeholderArg returns what follows prefix up to the closing "}}" and
// the bytes after it.
func placeholderArg(rest []byte, prefix string) (arg string, after []byte, err error) {
	body := rest[len(prefix):]
	end := bytes.Index(body, []byte("}}"))
	if end < 0 {
		return "", nil, fmt.Errorf("%s...: no closing }}", prefix)
	}
	return string(body[:end]), body[end+2:], nil
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
	// answered[k] is the seq of the latest request of kind k answered 2xx
	// on this thread (valid when hasAnswered[k]), for {{answered:KIND}}.
	answered    []uint64
	hasAnswered []bool
	rows        []*datafeed.Picker // this thread's picker of each of the run's data files (runner.feeds)
	h2          *h2Encoder         // --http2: encodes rendered header blocks (h2render.go)
}

func newRenderer(thread, threads, kinds int, seed uint64, feeds []*datafeed.Feed) *renderer {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
		s[8+i] = byte(uint64(thread) >> (8 * i))
	}
	r := &renderer{seq: uint64(thread), stride: uint64(threads), rng: rand.NewChaCha8(s),
		answered: make([]uint64, kinds), hasAnswered: make([]bool, kinds), h2: newH2Encoder()}
	for i, f := range feeds {
		r.rows = append(r.rows, f.NewPicker(seed^uint64(thread)<<32^uint64(i)))
	}
	return r
}

// reqVars is what one request's placeholders read, drawn once per
// request so that every {{seq}}, {{uuid}} and {{data...}} of it agree.
type reqVars struct {
	seq      uint64
	row      []string // {{data.COLUMN}}: the request's row
	uuid     [36]byte
	uuidDone bool
}

// next draws the variables of the next request of t: its {{seq}} and, if
// it reads a data file, its row. False when the file has no row left for
// it (--data-policy once): the request cannot be sent.
func (r *renderer) next(t *requestTemplate, v *reqVars) bool {
	v.uuidDone = false
	v.row = nil
	if t.feed >= 0 {
		row, err := r.rows[t.feed].Next()
		if err != nil {
			return false
		}
		v.row = row
	}
	v.seq = r.seq
	r.seq += r.stride
	return true
}

// appendSegs renders segs with one request's variables.
func (r *renderer) appendSegs(dst []byte, segs []segment, v *reqVars) []byte {
	for _, s := range segs {
		switch s.kind {
		case segLiteral:
			dst = append(dst, s.literal...)
		case segSeq:
			dst = strconv.AppendUint(dst, v.seq, 10)
		case segSeqMod:
			dst = strconv.AppendUint(dst, v.seq%s.n, 10)
		case segAnswered:
			n := v.seq
			if r.hasAnswered[s.n] {
				n = r.answered[s.n]
			}
			dst = strconv.AppendUint(dst, n, 10)
		case segUUID:
			if !v.uuidDone {
				r.formatUUID(&v.uuid)
				v.uuidDone = true
			}
			dst = append(dst, v.uuid[:]...)
		case segData:
			dst = appendEncoded(dst, v.row[s.n], s.enc)
		}
	}
	return dst
}

// appendRequest appends one request to dst and returns it with the
// request's {{seq}}; false, and dst as it was, when its data file has no
// row left for it. Only dynamic templates reach here; static ones are
// written straight from t.static.
func (r *renderer) appendRequest(dst []byte, t *requestTemplate) ([]byte, uint64, bool) {
	var v reqVars
	if !r.next(t, &v) {
		return dst, 0, false
	}
	r.body = r.appendSegs(r.body[:0], t.body, &v)
	dst = r.appendSegs(dst, t.head, &v)
	if t.hasBody {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(r.body)), 10)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	return append(dst, r.body...), v.seq, true
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
