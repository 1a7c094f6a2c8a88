package loadtester

import (
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"weaseldb/loadtester/datafeed"

	"golang.org/x/net/http2/hpack"
)

// HTTP/2 requests (--http2): every kind's request as header fields and a
// body, and the two protocol variants that send them, chosen once per
// connection like HTTP/1.1's (http1.go):
//
//   - h2Static, for one kind without placeholders: its header block is
//     encoded once, before the run, and every stream of every connection
//     sends those bytes. No HPACK work per request.
//   - h2Rendered, for a workload or placeholders: each request's kind is
//     picked in turn (kindOf) and, where it has placeholders, its
//     variables drawn (renderer.next: {{seq}}, the data row) and its
//     fields rendered with the HTTP/1.1 machinery's segments
//     (renderer.appendSegs), then encoded. A kind without placeholders
//     still sends its block encoded once.
//
// Every block, encoded once or per request, starts with a dynamic table
// size update to 0 and indexes nothing, so it is the same bytes whatever
// the connection sent before: the server's decoder keeps no state of
// ours, and a rendered block needs no per-connection encoder. Within a
// rendered kind the fields without placeholders are encoded once too;
// only those with placeholders (and content-length, when the body has
// them) are encoded per request.
//
// The server's SETTINGS_MAX_HEADER_LIST_SIZE is checked against a bound
// computed once (h2Requests.listSize): exact for a kind without
// placeholders, for one with them the longest its fields can render
// ({{seq}} 20 digits, {{uuid}} 36 bytes, {{data.COLUMN}} the column's
// longest value). A request never goes out over the limit; a run whose
// requests might is refused in one line (h2SettingsAllow).
//
// Who owns what: h2Requests is built before the run and read-only after;
// the encoder and its scratch (h2Encoder) are a network thread's
// renderer's, so its loop's alone.

// h2Requests is what an HTTP/2 run sends: each kind's request.
type h2Requests struct {
	kinds []h2Kind // as the runner's kinds
	// listSize bounds the header list of any request (RFC 9113 §6.5.2:
	// names, values and 32 a field), for the server's
	// SETTINGS_MAX_HEADER_LIST_SIZE.
	listSize uint32
}

// h2Kind is one kind's request over HTTP/2.
type h2Kind struct {
	dynamic bool
	block   []byte // !dynamic: the whole header block, encoded once
	// body is the body when it has no placeholders (shared, read-only,
	// by every stream that sends it); bodySegs its segments when it has
	// (nil otherwise), rendered per request.
	body     []byte
	bodySegs []segment
	fields   []h2Field // dynamic: the header fields, in order
	length   bool      // dynamic: a content-length follows the fields, the rendered body's length
}

// h2Field is a header field of a rendered kind: encoded once when it has
// no placeholders (enc, adjacent such fields together), else rendered.
type h2Field struct {
	enc         []byte
	name, value []segment
}

// Field sizes for the header list's bound (§6.5.2).
const (
	h2FieldOverhead = 32 // §6.5.2: each field counts 32 bytes past its name and value
	h2NumberMax     = 20 // the longest decimal uint64: {{seq}}, {{seq%N}}, {{answered:KIND}}, a content-length
	h2UUIDLen       = 36
)

// newH2Requests builds the run's HTTP/2 requests from the config, as
// newKinds builds its HTTP/1.1 ones (the same kinds, headers, bodies, data
// files and placeholders): the pseudo-headers, then the headers (names
// lower-cased; Host becomes :authority, and the connection-specific
// headers HTTP/2 forbids are dropped), then content-length where there is
// a body. run replaces {{run}} first.
func newH2Requests(cfg *Config, run string) (*h2Requests, error) {
	sub := func(s string) string { return strings.ReplaceAll(s, placeholderRun, run) }
	var specs []RequestKind
	var ph []placeholders
	if w := cfg.Workload; w != nil {
		for _, k := range w.Kinds {
			if k.Feed == nil {
				k.Feed = cfg.Data
			}
			k.Headers = append(append([]string(nil), cfg.Headers...), k.Headers...)
			specs = append(specs, k)
			ph = append(ph, placeholders{kinds: w.resolver(), columns: k.columns(), feed: k.Feed})
		}
	} else {
		k := RequestKind{Name: "request", Method: cfg.Method, Path: cfg.Path, Headers: cfg.Headers, Body: cfg.Body, Feed: cfg.Data}
		specs, ph = []RequestKind{k}, []placeholders{{columns: k.columns(), feed: k.Feed}}
	}
	reqs := &h2Requests{kinds: make([]h2Kind, len(specs))}
	enc := newH2Encoder()
	for i := range specs {
		k := &specs[i]
		size, err := reqs.kinds[i].build(cfg, k, sub, ph[i], enc)
		if err != nil {
			if cfg.Workload != nil {
				return nil, fmt.Errorf("--http2: request %s: %w", k.Name, err)
			}
			return nil, fmt.Errorf("--http2: %w", err)
		}
		reqs.listSize = max(reqs.listSize, size)
	}
	return reqs, nil
}

// build makes k's request into h and returns its header list's bound.
func (h *h2Kind) build(cfg *Config, k *RequestKind, sub func(string) string, ph placeholders, enc *h2Encoder) (uint32, error) {
	scheme := "http"
	if cfg.TLS != nil {
		scheme = "https"
	}
	type field struct{ name, value string }
	authority := cfg.hostHeader()
	var extra []field
	for _, hd := range k.Headers {
		name, value, _ := strings.Cut(sub(hd), ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !strings.Contains(name, "{{") {
			name = strings.ToLower(name)
		}
		switch name {
		case "host":
			authority = value
		case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "content-length":
		default:
			extra = append(extra, field{name, value})
		}
	}
	fields := append([]field{{":method", k.Method}, {":scheme", scheme}, {":authority", authority}, {":path", sub(k.Path)}}, extra...)
	body := []byte(sub(string(k.Body)))
	bodySegs, err := splitSegments(body, ph, inBody)
	if err != nil {
		return 0, err
	}
	hasBody := len(body) > 0 || k.Method == "POST" || k.Method == "PUT" || k.Method == "PATCH"
	if dynamicSegments(bodySegs) {
		h.bodySegs, h.length, h.dynamic = bodySegs, hasBody, true
	} else {
		h.body = body
		if hasBody {
			fields = append(fields, field{"content-length", strconv.Itoa(len(body))})
		}
	}
	var size uint32
	for _, f := range fields {
		name, err := splitSegments([]byte(f.name), ph, inHeader)
		if err != nil {
			return 0, err
		}
		at := inHeader
		if f.name == ":path" {
			at = inTarget
		}
		value, err := splitSegments([]byte(f.value), ph, at)
		if err != nil {
			return 0, err
		}
		size += uint32(h2FieldOverhead + segsWidest(name, k.Feed) + segsWidest(value, k.Feed))
		if dynamicSegments(name) || dynamicSegments(value) {
			h.fields = append(h.fields, h2Field{name: name, value: value})
			h.dynamic = true
			continue
		}
		enc.start()
		enc.field(f.name, f.value)
		b := enc.out.b[1:] // without the block's size update
		if n := len(h.fields); n > 0 && h.fields[n-1].enc != nil {
			h.fields[n-1].enc = append(h.fields[n-1].enc, b...)
		} else {
			h.fields = append(h.fields, h2Field{enc: append([]byte(nil), b...)})
		}
	}
	if h.length {
		size += uint32(h2FieldOverhead + len("content-length") + h2NumberMax)
	}
	if !h.dynamic { // one block, encoded once
		enc.start()
		for _, f := range h.fields {
			enc.out.b = append(enc.out.b, f.enc...)
		}
		h.block, h.fields = append([]byte(nil), enc.out.b...), nil
	}
	return size, nil
}

// segsWidest is the most bytes segs can render to (feed: the data file
// its {{data.COLUMN}} read).
func segsWidest(segs []segment, feed *datafeed.Feed) int {
	n := 0
	for _, s := range segs {
		switch s.kind {
		case segLiteral:
			n += len(s.literal)
		case segSeq, segSeqMod, segAnswered:
			n += h2NumberMax
		case segUUID:
			n += h2UUIDLen
		case segData:
			n += feed.Widest(int(s.n), s.enc.encodedLen)
		}
	}
	return n
}

// h2Encoder encodes header blocks with HPACK's dynamic table off: a
// network thread's (its renderer's), or newH2Requests' while it builds.
type h2Encoder struct {
	enc         *hpack.Encoder
	out         appendWriter // the block being encoded
	name, value []byte       // a rendered field's scratch
}

// appendWriter is the encoder's output: it appends, and never fails.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func newH2Encoder() *h2Encoder {
	e := &h2Encoder{}
	e.enc = hpack.NewEncoder(&e.out)
	// Table size 0: no field is ever indexed (a field is indexed only if
	// it fits the table), so no block depends on the ones before. The
	// encoder would announce the new size in its next block only; start
	// writes the announcement into every block instead, so the pending
	// one is spent here.
	e.enc.SetMaxDynamicTableSizeLimit(0)
	e.enc.WriteField(hpack.HeaderField{Name: ":method", Value: "GET"})
	return e
}

// start begins a block with a dynamic table size update to 0 (RFC 7541
// §6.3: 001 and a 5-bit size), which a block may carry whatever the table
// was, so the block stands alone.
func (e *h2Encoder) start() { e.out.b = append(e.out.b[:0], 0x20) }

// field encodes one field into the block (the encoder's writer never fails).
func (e *h2Encoder) field(name, value string) {
	e.enc.WriteField(hpack.HeaderField{Name: name, Value: value})
}

// scratch is b as a string for the encoder, with no copy: converting
// would allocate per field per request, and the encoder only reads its
// strings (it keeps none, as it indexes nothing), so they are dead
// before the scratch is written again.
func scratch(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// h2Block renders dynamic kind k's header block with one request's
// variables v, its body bodyLen bytes long; valid until the next call.
func (r *renderer) h2Block(k *h2Kind, v *reqVars, bodyLen int) []byte {
	e := r.h2
	e.start()
	for i := range k.fields {
		f := &k.fields[i]
		if f.enc != nil {
			e.out.b = append(e.out.b, f.enc...)
			continue
		}
		e.name = lowerBytes(r.appendSegs(e.name[:0], f.name, v))
		e.value = r.appendSegs(e.value[:0], f.value, v)
		e.field(scratch(e.name), scratch(e.value))
	}
	if k.length {
		e.value = strconv.AppendInt(e.value[:0], int64(bodyLen), 10)
		e.field("content-length", scratch(e.value))
	}
	return e.out.b
}

// lowerBytes lower-cases b in place: HTTP/2 field names are lower case
// (RFC 9113 §8.2.1), and a rendered name may not be.
func lowerBytes(b []byte) []byte {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return b
}

// h2Static is HTTP/2 with one kind whose request never changes: every
// stream sends its block and body as they are.
type h2Static struct{ *h2Conn }

// batch writes want requests into the source's scratch, one stream each.
func (h h2Static) batch(src requestSource, c *conn, want int) ([]byte, int) {
	for j := range want {
		n := c.sent + j
		h.writeRequest(n&c.mask, uint32(2*n+1), h.staticBlock, h.staticBody)
	}
	h.open += want
	buf := src.scratch()
	*buf = h.take((*buf)[:0])
	return *buf, want
}

// appendScheduled appends one request, on the next stream, to dst.
func (h h2Static) appendScheduled(_ requestSource, c *conn, dst []byte, _ uint64) ([]byte, bool) {
	h.writeRequest(c.sent&c.mask, uint32(2*c.sent+1), h.staticBlock, h.staticBody)
	h.open++
	return h.take(dst), true
}

// h2Rendered is HTTP/2 with kinds picked per request (a workload) or
// requests rendered per request (placeholders).
type h2Rendered struct{ *h2Conn }

// batch writes up to want requests into the source's scratch, the closed
// loop's kinds picked in turn; fewer when the run's data file has no row
// left.
func (h h2Rendered) batch(src requestSource, c *conn, want int) ([]byte, int) {
	n := want
	for j := range want {
		if !h.writeKind(src, c, c.sent+j, src.closedKind(j)) {
			n = j
			break
		}
	}
	src.tookClosed(n)
	h.open += n
	buf := src.scratch()
	*buf = h.take((*buf)[:0])
	return *buf, n
}

// appendScheduled appends the schedule's k-th request, of the kind k
// picks, on the next stream; false, and dst as it was, when its data
// file has no row left.
func (h h2Rendered) appendScheduled(src requestSource, c *conn, dst []byte, k uint64) ([]byte, bool) {
	if !h.writeKind(src, c, c.sent, src.scheduledKind(k)) {
		return dst, false
	}
	h.open++
	return h.take(dst), true
}

// writeKind writes stream n's request, of kind, into h.out and notes its
// kind and {{seq}} in the ring; false, with nothing written, when its
// data file has no row left. Its variables are drawn before anything is
// written, so a request that cannot be rendered takes no stream.
func (h *h2Conn) writeKind(src requestSource, c *conn, n int, kind uint8) bool {
	i, id := n&c.mask, uint32(2*n+1)
	block, body, scratch, seq, ok := src.h2Request(kind)
	if !ok {
		return false
	}
	if h.writeRequest(i, id, block, body) && scratch {
		h.keepWaiting(i) // the scratch is the next request's: what waits for a window is copied
	}
	c.setKind(i, kind, seq)
	return true
}

// take appends the frames written to dst and empties h.out.
func (h *h2Conn) take(dst []byte) []byte {
	dst = append(dst, h.out.Bytes()...)
	h.out.Reset()
	return dst
}
