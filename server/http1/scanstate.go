package http1

// phase is where the line-by-line scan of the current request stands.
type phase uint8

const (
	phaseRequestLine phase = iota
	phaseHeaders
	phaseBody         // Content-Length body
	phaseChunkSize    // expecting a chunk-size line
	phaseChunkData    // inside chunk data
	phaseChunkDataEnd // expecting the CRLF after chunk data
	phaseTrailers     // after the last chunk, until the empty line
)

type span struct{ start, end int }

func (s span) slice(buf []byte) []byte {
	if s.start < 0 {
		return nil
	}
	return buf[s.start:s.end:s.end]
}

var noSpan = span{-1, -1}

// headerFacts is what the headers the parser acts on said, as offsets from
// the start of the buffer. Both the one-pass head reader and the
// line-by-line scan record into it (knownHeader).
type headerFacts struct {
	version        Version
	hosts          int // Host header lines seen
	requestID      span
	contentType    span
	contentLength  int64
	chunked        bool
	connClose      bool
	connKeepAlive  bool
	expectContinue bool
}

func freshFacts() headerFacts {
	return headerFacts{requestID: noSpan, contentType: noSpan, contentLength: -1}
}

// keepAlive is the version's default, then the Connection tokens.
func (f *headerFacts) keepAlive() bool {
	if f.version == HTTP10 {
		return f.connKeepAlive && !f.connClose
	}
	return !f.connClose
}

// scanState is everything learned about the request being parsed, as offsets
// from the start of the buffer, so it survives the caller growing or moving
// its buffer between calls.
type scanState struct {
	phase    phase
	pos      int // start of the next unparsed line (or chunk data)
	searched int // how far the search for the next '\n' got (>= pos)

	reqStart    int // after any empty lines preceding the request line
	method      span
	target      span
	query       span
	path        span // the request-target's path (absolute-form: after the authority)
	headerStart int
	headerEnd   int // start of the final empty line
	bodyStart   int

	headerFacts

	chunkLeft int // bytes of the current chunk still to copy
}

func freshState() scanState {
	return scanState{
		method: noSpan, target: noSpan, query: noSpan, path: noSpan,
		headerFacts: freshFacts(),
	}
}
