package api

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"
)

// The encoders append to dst and return it, like strconv.Append*, so a
// pipeline stage can build a response in a reused buffer without allocating.
// Hand-written (commit hot path); each is checked against encoding/json in
// the tests.

// NotCommittedReason says why a commit was not applied.
type NotCommittedReason uint8

// Reasons a commit is not applied.
const (
	// ReasonConflict: a precondition's key or range was written after
	// read_version.
	ReasonConflict NotCommittedReason = iota + 1
	// ReasonReadVersionTooOld: read_version is older than the conflict
	// history the resolver keeps, so a conflict cannot be ruled out.
	ReasonReadVersionTooOld
	// ReasonReadVersionInFuture: read_version is newer than any version
	// assigned before this commit.
	ReasonReadVersionInFuture
	// ReasonOutcomeUnknown: a duplicate request_id whose original outcome
	// is no longer kept; nothing was applied for the duplicate. (Not
	// produced since outcomes are kept exactly as long as their ids; kept
	// so the wire value stays reserved.)
	ReasonOutcomeUnknown
	// ReasonRequestIDBanned: GET /v1/status answered not_found for this
	// request_id, so no commit with it may land afterwards (the answer
	// stays true); nothing applied, no version.
	ReasonRequestIDBanned
	// ReasonRequestIDUnverifiable: commit.max_request_ids (an opt-in cap;
	// none by default) was reached and ids still within retention were
	// dropped; this commit's read_version
	// does not prove it is not a retry of one of them, so it is refused
	// rather than risk applying a commit twice; nothing applied, no version.
	ReasonRequestIDUnverifiable
)

func (r NotCommittedReason) String() string {
	switch r {
	case ReasonConflict:
		return "conflict"
	case ReasonReadVersionTooOld:
		return "read_version_too_old"
	case ReasonReadVersionInFuture:
		return "read_version_in_future"
	case ReasonOutcomeUnknown:
		return "outcome_unknown"
	case ReasonRequestIDBanned:
		return "request_id_banned"
	case ReasonRequestIDUnverifiable:
		return "request_id_unverifiable"
	}
	return "unknown"
}

// CommitResult is the outcome of one commit, as the pipeline decided it.
// It is comparable (==), so tests can check a replayed outcome whole.
type CommitResult struct {
	Committed bool
	// Version is the version the sequence stage assigned; the commit
	// version when Committed. 0 for a commit refused before sequencing
	// (request_id_banned, request_id_unverifiable): it has none.
	Version int64
	// Duplicate: the request_id was already committed or refused within
	// retention; the result is the original's and nothing was applied again.
	Duplicate bool
	Reason    NotCommittedReason // when !Committed
	// ConflictIndex and Conflict: the first conflicting precondition when
	// Reason == ReasonConflict (Conflict points into the request, or into
	// the copy the store keeps for duplicates and status).
	ConflictIndex int
	Conflict      *Precondition
	// MinReadVersion: ReasonRequestIDUnverifiable only; a commit with a
	// read_version at or above it is accepted.
	MinReadVersion int64
}

// AppendCommitResponse appends the JSON answer to a POST /v1/commit:
//
//	{"status":"committed","version":7,"request_id":"..."}
//	{"status":"not_committed","version":7,"reason":"conflict","conflict":{"index":0,"type":"point_read","key":"a2V5"}}
//	{"status":"not_committed","reason":"request_id_banned","request_id":"..."}
//
// request_id is present when the request had one; "duplicate":true marks the
// answer to a request_id seen before, which repeats every field of the
// original's answer. A commit refused before sequencing has no version.
func AppendCommitResponse(dst []byte, req *CommitRequest, res CommitResult) []byte {
	if res.Committed {
		dst = append(dst, `{"status":"committed"`...)
	} else {
		dst = append(dst, `{"status":"not_committed"`...)
	}
	if res.Version > 0 {
		dst = append(dst, `,"version":`...)
		dst = strconv.AppendInt(dst, res.Version, 10)
	}
	if !res.Committed {
		dst = appendReason(dst, res.Reason, res.ConflictIndex, res.Conflict)
		if res.Reason == ReasonRequestIDUnverifiable {
			dst = append(dst, `,"min_read_version":`...)
			dst = strconv.AppendInt(dst, res.MinReadVersion, 10)
		}
	}
	if req != nil && req.RequestID != "" {
		dst = append(dst, `,"request_id":`...)
		dst = appendString(dst, req.RequestID)
	}
	if res.Duplicate {
		dst = append(dst, `,"duplicate":true`...)
	}
	return append(dst, '}')
}

func appendReason(dst []byte, reason NotCommittedReason, index int, conflict *Precondition) []byte {
	dst = append(dst, `,"reason":"`...)
	dst = append(dst, reason.String()...)
	dst = append(dst, '"')
	if reason != ReasonConflict {
		return dst
	}
	dst = append(dst, `,"conflict":{"index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	if conflict != nil {
		dst = appendPreconditionFields(dst, *conflict)
	}
	return append(dst, '}')
}

func appendPreconditionFields(dst []byte, p Precondition) []byte {
	dst = append(dst, `,"type":"`...)
	dst = append(dst, p.Type.String()...)
	dst = append(dst, '"')
	if p.Type == PointRead {
		dst = append(dst, `,"key":`...)
		return appendBase64(dst, p.Key)
	}
	dst = append(dst, `,"begin":`...)
	dst = appendBase64(dst, p.Begin)
	dst = append(dst, `,"end":`...)
	return appendBase64(dst, p.End)
}

// StatusKind is the answer class of GET /v1/status.
type StatusKind uint8

// Status answers.
const (
	StatusCommitted StatusKind = iota + 1
	StatusNotCommitted
	StatusNotFound
	StatusLogTruncated
)

func (k StatusKind) String() string {
	switch k {
	case StatusCommitted:
		return "committed"
	case StatusNotCommitted:
		return "not_committed"
	case StatusNotFound:
		return "not_found"
	case StatusLogTruncated:
		return "log_truncated"
	}
	return "unknown"
}

// StatusResult is the answer to GET /v1/status?request_id=ID.
type StatusResult struct {
	Kind      StatusKind
	RequestID string
	// Version: the commit's version (Committed, NotCommitted).
	Version int64
	// Reason, ConflictIndex and Conflict: NotCommitted only.
	Reason        NotCommittedReason
	ConflictIndex int
	Conflict      *Precondition
	// OldestVersion: LogTruncated only; the oldest version whose request
	// ids are still known.
	OldestVersion int64
	// TruncatedByCap: LogTruncated only; ids were dropped because
	// commit.max_request_ids (set; there is no cap by default) was
	// reached, not because retention passed.
	TruncatedByCap bool
}

// AppendStatusResponse appends the JSON answer to GET /v1/status:
//
//	{"status":"committed","request_id":"...","version":7}
//	{"status":"not_committed","request_id":"...","version":7,"reason":"conflict","conflict":{"index":0,"type":"point_read","key":"a2V5"}}
//	{"status":"not_found","request_id":"..."}
//	{"status":"log_truncated","request_id":"...","oldest_version":1000,"reason":"retention"}
//
// The reason of log_truncated is "retention" (ids past both retention
// limits) or "max_request_ids" (the cap dropped ids still within retention).
func AppendStatusResponse(dst []byte, s StatusResult) []byte {
	dst = append(dst, `{"status":"`...)
	dst = append(dst, s.Kind.String()...)
	dst = append(dst, `","request_id":`...)
	dst = appendString(dst, s.RequestID)
	switch s.Kind {
	case StatusCommitted:
		dst = append(dst, `,"version":`...)
		dst = strconv.AppendInt(dst, s.Version, 10)
	case StatusNotCommitted:
		dst = append(dst, `,"version":`...)
		dst = strconv.AppendInt(dst, s.Version, 10)
		dst = appendReason(dst, s.Reason, s.ConflictIndex, s.Conflict)
	case StatusLogTruncated:
		dst = append(dst, `,"oldest_version":`...)
		dst = strconv.AppendInt(dst, s.OldestVersion, 10)
		if s.TruncatedByCap {
			dst = append(dst, `,"reason":"max_request_ids"`...)
		} else {
			dst = append(dst, `,"reason":"retention"`...)
		}
	}
	return append(dst, '}')
}

// AppendError appends {"error":msg}, the body of every 4xx/5xx answer.
func AppendError(dst []byte, msg string) []byte {
	dst = append(dst, `{"error":`...)
	dst = appendString(dst, msg)
	return append(dst, '}')
}

// AppendVersionResponse appends {"version":N} (GET /v1/version).
func AppendVersionResponse(dst []byte, version int64) []byte {
	dst = append(dst, `{"version":`...)
	dst = strconv.AppendInt(dst, version, 10)
	return append(dst, '}')
}

// AppendTransactionLine appends one /v1/subscribe line for a committed
// transaction, newline included:
//
//	{"version":7,"operations":[{"type":"write","key":"azE=","value":"djE="},{"type":"range_delete","begin":"YQ==","end":"Yg=="}]}
func AppendTransactionLine(dst []byte, version int64, ops []Operation) []byte {
	dst = append(dst, `{"version":`...)
	dst = strconv.AppendInt(dst, version, 10)
	dst = append(dst, `,"operations":[`...)
	for i, op := range ops {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"`...)
		dst = append(dst, op.Type.String()...)
		dst = append(dst, '"')
		switch op.Type {
		case Write:
			dst = append(dst, `,"key":`...)
			dst = appendBase64(dst, op.Key)
			dst = append(dst, `,"value":`...)
			dst = appendBase64(dst, op.Value)
		case Delete:
			dst = append(dst, `,"key":`...)
			dst = appendBase64(dst, op.Key)
		case RangeDelete:
			dst = append(dst, `,"begin":`...)
			dst = appendBase64(dst, op.Begin)
			dst = append(dst, `,"end":`...)
			dst = appendBase64(dst, op.End)
		}
		dst = append(dst, '}')
	}
	return append(dst, "]}\n"...)
}

// AppendKeepaliveLine appends the line a subscription stream sends when idle
// for keepalive_interval_seconds; version is the latest committed version.
func AppendKeepaliveLine(dst []byte, version int64) []byte {
	dst = append(dst, `{"keepalive":true,"version":`...)
	dst = strconv.AppendInt(dst, version, 10)
	return append(dst, "}\n"...)
}

// Subscription error codes (the "error" of the final line of a stream).
const (
	SubscribeErrSlowConsumer = "slow_consumer"
	SubscribeErrLogTruncated = "log_truncated"
	SubscribeErrShutdown     = "shutdown"
)

// AppendSubscribeErrorLine appends the final line of a subscription stream
// that the server ends: {"error":"slow_consumer","message":"..."}.
func AppendSubscribeErrorLine(dst []byte, code, msg string) []byte {
	dst = append(dst, `{"error":`...)
	dst = appendString(dst, code)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, msg)
	return append(dst, "}\n"...)
}

func appendBase64(dst []byte, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD as
// encoding/json does.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
