package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
)

// RetentionPolicy is the body of PUT /v1/retention/{policy_id}: how much
// history one consumer needs kept. Zero means "no limit from this policy in
// that dimension" (the config's limits still apply). At least one is set.
//
//	{"versions": 1000000, "seconds": 3600}
type RetentionPolicy struct {
	Versions int64 `json:"versions,omitempty"`
	Seconds  int64 `json:"seconds,omitempty"`
}

// MaxRetentionSeconds bounds a policy's seconds (one year, the config's
// request_id_retention_hours maximum).
const MaxRetentionSeconds = 8760 * 3600

// MaxPolicyIDLength bounds a policy id.
const MaxPolicyIDLength = 128

// ParseRetentionPolicy parses and validates a policy body. Not on a hot
// path, so it uses encoding/json, strictly: unknown fields, wrong types,
// null, trailing data and out-of-range values are errors naming the field.
func ParseRetentionPolicy(body []byte) (RetentionPolicy, error) {
	raw, err := decodePolicyObject(body)
	if err != nil {
		return RetentionPolicy{}, err
	}
	for _, name := range sortedNames(raw) {
		if name != "versions" && name != "seconds" {
			return RetentionPolicy{}, &FieldError{Field: name, Msg: `unknown field; allowed: versions, seconds`}
		}
	}
	var p RetentionPolicy
	if p.Versions, err = policyInt("versions", raw["versions"], 1<<62); err != nil {
		return RetentionPolicy{}, err
	}
	if p.Seconds, err = policyInt("seconds", raw["seconds"], MaxRetentionSeconds); err != nil {
		return RetentionPolicy{}, err
	}
	if len(raw) == 0 {
		return RetentionPolicy{}, &FieldError{Field: "body", Msg: `must set "versions", "seconds" or both`}
	}
	return p, nil
}

// policyExample is shown when the body is not a policy object at all.
const policyExample = `like {"versions": 1000000, "seconds": 3600}`

// decodePolicyObject decodes the body into its members, with messages in
// the API's words (encoding/json's, such as "EOF" or "cannot unmarshal
// array into Go value of type map[string]json.RawMessage", are not).
func decodePolicyObject(body []byte) (map[string]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, &FieldError{Field: "body", Msg: "must be a JSON object " + policyExample + ", got an empty body"}
	}
	if trimmed[0] != '{' {
		return nil, &FieldError{Field: "body", Msg: "must be a JSON object " + policyExample + ", got " + jsonKind(trimmed[0])}
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&raw); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			// Offset counts the offending byte itself.
			return nil, &FieldError{Field: "body", Msg: fmt.Sprintf("invalid JSON at offset %d", max(syn.Offset-1, 0))}
		}
		return nil, &FieldError{Field: "body", Msg: "invalid JSON: unterminated object"}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &FieldError{Field: "body", Msg: "unexpected data after the JSON object"}
	}
	return raw, nil
}

// jsonKind names the JSON value that starts with c, with its article.
func jsonKind(c byte) string {
	switch k := valueKind(c); k {
	case "":
		return "invalid JSON"
	case "null":
		return k
	case "array", "object":
		return "an " + k
	default:
		return "a " + k
	}
}

func policyInt(field string, raw json.RawMessage, hi int64) (int64, error) {
	if raw == nil {
		return 0, nil
	}
	v, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || v < 1 || v > hi {
		return 0, &FieldError{Field: field, Msg: fmt.Sprintf("must be an integer between 1 and %d, got %s", hi, raw)}
	}
	return v, nil
}

func sortedNames(m map[string]json.RawMessage) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// ValidatePolicyID checks the {policy_id} of a retention route: 1 to 128
// characters of A-Z a-z 0-9 . _ - (safe in a URL path and in logs).
func ValidatePolicyID(id string) error {
	if n := utf8.RuneCountInString(id); n == 0 || n > MaxPolicyIDLength {
		return &FieldError{Field: "policy_id", Msg: fmt.Sprintf("must be 1 to %d characters, got %d", MaxPolicyIDLength, n)}
	}
	for i, c := range id {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return &FieldError{Field: "policy_id", Msg: fmt.Sprintf("may only hold A-Z a-z 0-9 . _ -, got %q at byte %d", c, i)}
		}
	}
	return nil
}

// AppendRetentionPolicy appends {"policy_id":"x","versions":N,"seconds":S}
// (zero dimensions left out).
func AppendRetentionPolicy(dst []byte, id string, p RetentionPolicy) []byte {
	dst = append(dst, `{"policy_id":`...)
	dst = appendString(dst, id)
	if p.Versions > 0 {
		dst = append(dst, `,"versions":`...)
		dst = strconv.AppendInt(dst, p.Versions, 10)
	}
	if p.Seconds > 0 {
		dst = append(dst, `,"seconds":`...)
		dst = strconv.AppendInt(dst, p.Seconds, 10)
	}
	return append(dst, '}')
}

// NamedPolicy is a policy with its id, for listings.
type NamedPolicy struct {
	ID     string
	Policy RetentionPolicy
}

// AppendRetentionPolicies appends {"policies":[...]} (GET /v1/retention).
func AppendRetentionPolicies(dst []byte, policies []NamedPolicy) []byte {
	dst = append(dst, `{"policies":[`...)
	for i, np := range policies {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendRetentionPolicy(dst, np.ID, np.Policy)
	}
	return append(dst, "]}"...)
}
