// Package check judges a response against an expression given on the
// command line (--check) or per kind in a workload: its status, its body,
// a header or a JSON value. Pure: no I/O; the engine hands it what it read.
//
// The expressions:
//
//	status == 200        status != 500        status in 200..299
//	body contains "ok"   body !contains "error"
//	body ~ REGEX         body !~ REGEX
//	header[Content-Type] ~ json      header[X-Id] == "abc"
//	json.status == "ok"  json.count >= 3      json.items.# > 0
//
// json.PATH is a gjson path (github.com/tidwall/gjson); a value compares as
// a number when the operand is a number, as a string otherwise. A path the
// body does not hold fails the check (and so does a body that is not JSON).
package check

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Response is what a check reads: the status, the raw header lines
// ("Name: value\r\n" each, as received) and the body.
type Response struct {
	Status int
	Header []byte
	Body   []byte
}

// Check is a parsed expression.
type Check struct {
	Expr  string // as given, its name in tables, the JSON and thresholds
	needs Needs
	eval  func(*Response) bool
}

// Needs is what of a response a check reads: a run whose checks need no
// body never keeps one.
type Needs struct{ Header, Body bool }

// Needs says what c reads.
func (c *Check) Needs() Needs { return c.needs }

// Pass reports whether r passes c.
func (c *Check) Pass(r *Response) bool { return c.eval(r) }

// maxExpr bounds an expression (a check, not a program).
const maxExpr = 4096

// Parse reads an expression; the error names it and says what was
// expected.
func Parse(expr string) (*Check, error) {
	c, err := parse(strings.TrimSpace(expr))
	if err != nil {
		return nil, fmt.Errorf("--check %q: %w", expr, err)
	}
	c.Expr = strings.TrimSpace(expr)
	return c, nil
}

func parse(e string) (*Check, error) {
	if e == "" || len(e) > maxExpr {
		return nil, fmt.Errorf("want status, body, header[NAME] or json.PATH, an operator and a value (e.g. status==200)")
	}
	subject, rest := splitSubject(e)
	op, operand, err := splitOperator(rest)
	if err != nil {
		return nil, err
	}
	switch {
	case subject == "status":
		return statusCheck(op, operand)
	case subject == "body":
		f, err := textTest(op, operand)
		if err != nil {
			return nil, err
		}
		return &Check{needs: Needs{Body: true}, eval: func(r *Response) bool { return f(r.Body) }}, nil
	case strings.HasPrefix(subject, "header[") && strings.HasSuffix(subject, "]"):
		name := strings.TrimSpace(subject[len("header[") : len(subject)-1])
		if name == "" || strings.ContainsAny(name, " :\r\n") {
			return nil, fmt.Errorf("header name %q: want a field name such as Content-Type", name)
		}
		f, err := textTest(op, operand)
		if err != nil {
			return nil, err
		}
		return &Check{needs: Needs{Header: true}, eval: func(r *Response) bool {
			v, ok := HeaderValue(r.Header, name)
			return ok && f(v)
		}}, nil
	case strings.HasPrefix(subject, "json."):
		return jsonCheck(subject[len("json."):], op, operand)
	}
	return nil, fmt.Errorf("subject %q: want status, body, header[NAME] or json.PATH", subject)
}

// splitSubject cuts the subject (up to the first space or operator
// character outside header[...]) from the rest.
func splitSubject(e string) (subject, rest string) {
	depth := 0
	for i := 0; i < len(e); i++ {
		switch ch := e[i]; {
		case ch == '[':
			depth++
		case ch == ']' && depth > 0:
			depth--
		case depth == 0 && (ch == ' ' || ch == '=' || ch == '!' || ch == '<' || ch == '>' || ch == '~'):
			return e[:i], strings.TrimSpace(e[i:])
		}
	}
	return e, ""
}

var operators = []string{"==", "!=", "<=", ">=", "<", ">", "!~", "~", "!contains", "contains", "in"}

func splitOperator(rest string) (op, operand string, err error) {
	for _, o := range operators {
		if strings.HasPrefix(rest, o) {
			operand = strings.TrimSpace(rest[len(o):])
			if operand == "" {
				return "", "", fmt.Errorf("operator %s: want a value after it", o)
			}
			return o, operand, nil
		}
	}
	return "", "", fmt.Errorf("want an operator (==, !=, <, <=, >, >=, in, contains, !contains, ~, !~) after the subject, got %q", rest)
}

func statusCheck(op, operand string) (*Check, error) {
	if op == "in" {
		lo, hi, ok := strings.Cut(operand, "..")
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		if !ok || err1 != nil || err2 != nil || a > b {
			return nil, fmt.Errorf("status in %q: want LOW..HIGH, e.g. 200..299", operand)
		}
		return &Check{eval: func(r *Response) bool { return r.Status >= a && r.Status <= b }}, nil
	}
	want, err := strconv.Atoi(operand)
	if err != nil {
		return nil, fmt.Errorf("status %s %q: want a status code", op, operand)
	}
	cmp, err := compareInts(op)
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	return &Check{eval: func(r *Response) bool { return cmp(r.Status, want) }}, nil
}

func compareInts(op string) (func(a, b int) bool, error) {
	switch op {
	case "==":
		return func(a, b int) bool { return a == b }, nil
	case "!=":
		return func(a, b int) bool { return a != b }, nil
	case "<":
		return func(a, b int) bool { return a < b }, nil
	case "<=":
		return func(a, b int) bool { return a <= b }, nil
	case ">":
		return func(a, b int) bool { return a > b }, nil
	case ">=":
		return func(a, b int) bool { return a >= b }, nil
	}
	return nil, fmt.Errorf("operator %s: want ==, !=, <, <=, >, >= or in", op)
}

// textTest is a test of bytes: equality, containment or a regular
// expression. An operand wrapped in quotes is unquoted (Go's syntax); any
// other is taken as written.
func textTest(op, operand string) (func([]byte) bool, error) {
	v, err := unquote(operand)
	if err != nil {
		return nil, err
	}
	want := []byte(v)
	switch op {
	case "==":
		return func(b []byte) bool { return bytes.Equal(b, want) }, nil
	case "!=":
		return func(b []byte) bool { return !bytes.Equal(b, want) }, nil
	case "contains":
		return func(b []byte) bool { return bytes.Contains(b, want) }, nil
	case "!contains":
		return func(b []byte) bool { return !bytes.Contains(b, want) }, nil
	case "~", "!~":
		re, err := regexp.Compile(v)
		if err != nil {
			return nil, fmt.Errorf("regular expression %q: %w", v, err)
		}
		neg := op == "!~"
		return func(b []byte) bool { return re.Match(b) != neg }, nil
	}
	return nil, fmt.Errorf("operator %s: want ==, !=, contains, !contains, ~ or !~ for text", op)
}

func unquote(s string) (string, error) {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '`') && s[len(s)-1] == s[0] {
		v, err := strconv.Unquote(s)
		if err != nil {
			return "", fmt.Errorf("value %s: a malformed quoted string", s)
		}
		return v, nil
	}
	return s, nil
}

func jsonCheck(path, op, operand string) (*Check, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	if op == "in" {
		return nil, fmt.Errorf("operator in: only for status")
	}
	if num, err := strconv.ParseFloat(operand, 64); err == nil && op != "~" && op != "!~" && op != "contains" && op != "!contains" {
		cmp, err := compareFloats(op)
		if err != nil {
			return nil, err
		}
		return &Check{needs: Needs{Body: true}, eval: func(r *Response) bool {
			v := gjson.GetBytes(r.Body, path)
			return v.Exists() && v.Type == gjson.Number && cmp(v.Num, num)
		}}, nil
	}
	f, err := textTest(op, operand)
	if err != nil {
		return nil, err
	}
	return &Check{needs: Needs{Body: true}, eval: func(r *Response) bool {
		v := gjson.GetBytes(r.Body, path)
		return v.Exists() && f([]byte(v.String()))
	}}, nil
}

// checkPath refuses what gjson would read as no path at all: an empty
// path, or brackets and parentheses that do not balance.
func checkPath(path string) error {
	if path == "" {
		return fmt.Errorf("json.: want a path after it, e.g. json.status")
	}
	var stack []byte
	closer := map[byte]byte{')': '(', ']': '[', '}': '{'}
	for i := 0; i < len(path); i++ {
		switch ch := path[i]; ch {
		case '(', '[', '{':
			stack = append(stack, ch)
		case ')', ']', '}':
			if len(stack) == 0 || stack[len(stack)-1] != closer[ch] {
				return fmt.Errorf("json path %q: unbalanced %c", path, ch)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("json path %q: unclosed %c", path, stack[len(stack)-1])
	}
	return nil
}

func compareFloats(op string) (func(a, b float64) bool, error) {
	switch op {
	case "==":
		return func(a, b float64) bool { return a == b }, nil
	case "!=":
		return func(a, b float64) bool { return a != b }, nil
	case "<":
		return func(a, b float64) bool { return a < b }, nil
	case "<=":
		return func(a, b float64) bool { return a <= b }, nil
	case ">":
		return func(a, b float64) bool { return a > b }, nil
	case ">=":
		return func(a, b float64) bool { return a >= b }, nil
	}
	return nil, fmt.Errorf("operator %s: want ==, !=, <, <=, > or >= with a number", op)
}

// HeaderValue finds a field in raw header lines, by case-insensitive
// name, its value trimmed (the first, when repeated).
func HeaderValue(head []byte, name string) ([]byte, bool) {
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		n, v, ok := bytes.Cut(line, []byte(":"))
		if ok && strings.EqualFold(string(bytes.TrimSpace(n)), name) {
			return bytes.TrimSpace(v), true
		}
	}
	return nil, false
}
