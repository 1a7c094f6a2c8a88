package api

import (
	"encoding/base64"
	"fmt"
	"math"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner is a minimal JSON reader over one buffer (hand-written: commit
// hot path). It understands exactly what the commit body needs: objects,
// arrays, strings with every JSON escape, and non-negative integers. Values
// of any other kind are type errors naming the field.
type scanner struct {
	buf     []byte
	pos     int
	arena   []byte // decoded base64; slices handed out alias it
	scratch []byte // unescaped string being built
}

func (s *scanner) skipWS() {
	for s.pos < len(s.buf) {
		switch s.buf[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) syntax(field, msg string) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf("invalid JSON at offset %d: %s", s.pos, msg)}
}

// kind names the JSON value starting at the cursor, for type errors.
func (s *scanner) kind() string {
	if s.pos >= len(s.buf) {
		return "end of body"
	}
	if k := valueKind(s.buf[s.pos]); k != "" {
		return k
	}
	return fmt.Sprintf("invalid JSON at offset %d", s.pos)
}

// valueKind names the kind of JSON value that starts with c ("" if none).
func valueKind(c byte) string {
	switch {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "number"
	}
	return ""
}

// begin skips whitespace and consumes open, or reports that the value at
// field is not what was wanted.
func (s *scanner) begin(field string, open byte, what string) error {
	s.skipWS()
	if s.pos < len(s.buf) && s.buf[s.pos] == open {
		s.pos++
		return nil
	}
	return &FieldError{Field: field, Msg: "must be " + what + ", got " + s.kind()}
}

// object walks the members of an object whose '{' was consumed, calling
// member with each name; member must consume the value.
func (s *scanner) object(field string, member func(name []byte) error) error {
	s.skipWS()
	if s.pos < len(s.buf) && s.buf[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		s.skipWS()
		if s.pos >= len(s.buf) || s.buf[s.pos] != '"' {
			return s.syntax(field, "expected a member name")
		}
		name, err := s.str(field)
		if err != nil {
			return err
		}
		s.skipWS()
		if s.pos >= len(s.buf) || s.buf[s.pos] != ':' {
			return s.syntax(field, "expected ':'")
		}
		s.pos++
		// name may alias scratch: member must be done with it before it
		// reads the value (every caller looks the name up first).
		if err := member(name); err != nil {
			return err
		}
		s.skipWS()
		if s.pos >= len(s.buf) {
			return s.syntax(field, "unterminated object")
		}
		switch s.buf[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.syntax(field, "expected ',' or '}'")
		}
	}
}

// array walks the elements of the array at field, calling elem with each
// index; elem must consume the value.
func (s *scanner) array(field string, elem func(i int) error) error {
	if err := s.begin(field, '[', "an array"); err != nil {
		return err
	}
	s.skipWS()
	if s.pos < len(s.buf) && s.buf[s.pos] == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		if err := elem(i); err != nil {
			return err
		}
		s.skipWS()
		if s.pos >= len(s.buf) {
			return s.syntax(field, "unterminated array")
		}
		switch s.buf[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.syntax(field, "expected ',' or ']'")
		}
	}
}

// text reads a string value as valid UTF-8 Go text.
func (s *scanner) text(field string) (string, error) {
	if err := s.begin(field, '"', "a string"); err != nil {
		return "", err
	}
	s.pos--
	b, err := s.str(field)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", &FieldError{Field: field, Msg: "must be valid UTF-8"}
	}
	return string(b), nil
}

// base64 reads a string value holding standard, padded base64 and returns
// the decoded bytes (a slice of the arena).
func (s *scanner) base64(field string) ([]byte, error) {
	if err := s.begin(field, '"', "a base64 string"); err != nil {
		return nil, err
	}
	s.pos--
	enc, err := s.str(field)
	if err != nil {
		return nil, err
	}
	start := len(s.arena)
	need := base64.StdEncoding.DecodedLen(len(enc))
	if cap(s.arena)-start < need {
		// Only reachable when the arena was sized for another body; keep
		// earlier slices valid by starting a new array.
		s.arena = make([]byte, 0, max(need, 2*cap(s.arena)))
		start = 0
	}
	n, err := base64.StdEncoding.Decode(s.arena[start:start+need], enc)
	if err != nil {
		return nil, &FieldError{Field: field, Msg: base64Error(err)}
	}
	s.arena = s.arena[:start+n]
	return s.arena[start : start+n : start+n], nil
}

// nonNegativeInt reads an integer value in 0..MaxInt64.
func (s *scanner) nonNegativeInt(field string) (int64, error) {
	s.skipWS()
	start := s.pos
	var v int64
	for s.pos < len(s.buf) && s.buf[s.pos] >= '0' && s.buf[s.pos] <= '9' {
		d := int64(s.buf[s.pos] - '0')
		if v > (math.MaxInt64-d)/10 {
			return 0, &FieldError{Field: field, Msg: "out of range (max 9223372036854775807)"}
		}
		v = v*10 + d
		s.pos++
	}
	digits := s.pos - start
	got := ""
	switch {
	case digits == 0:
		got = s.kind()
		if got == "number" {
			got = "a negative number"
		}
	case digits > 1 && s.buf[start] == '0':
		got = "a number with a leading zero"
	case s.pos < len(s.buf) && (s.buf[s.pos] == '.' || s.buf[s.pos] == 'e' || s.buf[s.pos] == 'E'):
		got = "a number with a fraction or exponent"
	}
	if got != "" {
		s.pos = start
		return 0, &FieldError{Field: field, Msg: "must be a non-negative integer, got " + got}
	}
	return v, nil
}

// str reads a JSON string at the cursor ('"' not yet consumed) and returns
// its unescaped bytes. Without escapes it is a slice of buf; with escapes a
// slice of scratch, valid until the next call.
func (s *scanner) str(field string) ([]byte, error) {
	s.pos++ // opening quote
	start := s.pos
	for s.pos < len(s.buf) {
		c := s.buf[s.pos]
		switch {
		case c == '"':
			out := s.buf[start:s.pos]
			s.pos++
			return out, nil
		case c == '\\':
			s.scratch = append(s.scratch[:0], s.buf[start:s.pos]...)
			return s.strEscaped(field)
		case c < 0x20:
			return nil, s.syntax(field, "control character in string")
		}
		s.pos++
	}
	return nil, s.syntax(field, "unterminated string")
}

func (s *scanner) strEscaped(field string) ([]byte, error) {
	for s.pos < len(s.buf) {
		c := s.buf[s.pos]
		switch {
		case c == '"':
			s.pos++
			return s.scratch, nil
		case c < 0x20:
			return nil, s.syntax(field, "control character in string")
		case c != '\\':
			s.scratch = append(s.scratch, c)
			s.pos++
			continue
		}
		if s.pos+1 >= len(s.buf) {
			break
		}
		esc := s.buf[s.pos+1]
		s.pos += 2
		switch esc {
		case '"', '\\', '/':
			s.scratch = append(s.scratch, esc)
		case 'b':
			s.scratch = append(s.scratch, '\b')
		case 'f':
			s.scratch = append(s.scratch, '\f')
		case 'n':
			s.scratch = append(s.scratch, '\n')
		case 'r':
			s.scratch = append(s.scratch, '\r')
		case 't':
			s.scratch = append(s.scratch, '\t')
		case 'u':
			r, ok := s.unicodeEscape()
			if !ok {
				return nil, s.syntax(field, `bad \u escape`)
			}
			s.scratch = utf8.AppendRune(s.scratch, r)
		default:
			s.pos -= 2
			return nil, s.syntax(field, "bad escape")
		}
	}
	return nil, s.syntax(field, "unterminated string")
}

// unicodeEscape reads the XXXX of \uXXXX (already past "\u"), joining a
// surrogate pair; a lone surrogate becomes U+FFFD as in encoding/json.
func (s *scanner) unicodeEscape() (rune, bool) {
	r, ok := s.hex4()
	if !ok {
		return 0, false
	}
	if !utf16.IsSurrogate(r) {
		return r, true
	}
	if s.pos+6 <= len(s.buf) && s.buf[s.pos] == '\\' && s.buf[s.pos+1] == 'u' {
		save := s.pos
		s.pos += 2
		if r2, ok := s.hex4(); ok {
			if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
				return dec, true
			}
		}
		s.pos = save
	}
	return utf8.RuneError, true
}

func (s *scanner) hex4() (rune, bool) {
	if s.pos+4 > len(s.buf) {
		return 0, false
	}
	var r rune
	for _, c := range s.buf[s.pos : s.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	s.pos += 4
	return r, true
}

// base64Error words a decoding error without Go's phrasing: the offset is
// in the encoded string, counted from its first character.
func base64Error(err error) string {
	if at, ok := err.(base64.CorruptInputError); ok {
		return fmt.Sprintf("must be standard base64 (A-Z a-z 0-9 + /, '=' padded to a multiple of 4 characters); invalid at character %d", int64(at))
	}
	return "must be standard base64 (A-Z a-z 0-9 + /, '=' padded to a multiple of 4 characters)"
}
