package loadtester

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"weaseldb/loadtester/check"
	"weaseldb/loadtester/datafeed"
)

// A workload is a weighted mix of request kinds (docs/load_tester.md,
// "Mixed workloads"), read from TOML:
//
//	[[request]]
//	name = "ok"
//	weight = 80
//	path = "/ok"
//
//	[[request]]
//	name = "commit"
//	weight = 15
//	method = "POST"
//	path = "/v1/commit"
//	headers = ["Content-Type: application/json"]
//	body = '{"request_id":"loadtester-commit-{{seq}}","read_version":0,"operations":[]}'
//
// Each request's kind is fixed before the run by a table (kindTable) in
// which every kind appears in proportion to its weight, spread out evenly;
// a network thread walks it with its own counter, so choosing a kind on the
// hot path takes no lock, no allocation and no random number.

// Workload is a parsed workload file: the request kinds and their weights.
type Workload struct {
	Source string        // the file it was read from ("" when parsed from bytes)
	Kinds  []RequestKind // in file order
}

// RequestKind is one kind of request of a workload.
type RequestKind struct {
	Name     string   `json:"name"`
	Weight   int      `json:"weight"`
	Method   string   `json:"method"`
	Path     string   `json:"path"`
	Headers  []string `json:"headers,omitempty"`
	Body     []byte   `json:"-"`
	BodyFile string   `json:"body_file,omitempty"` // read into Body by LoadWorkload, relative to the workload file
	// Data is a CSV file whose rows feed this kind's {{data.COLUMN}}
	// (relative to the workload file), taken as DataPolicy says (once,
	// loop or random; loop by default); LoadWorkload reads it into Feed.
	// A kind without one reads --data's, if given.
	Data       string         `json:"data,omitempty"`
	DataPolicy string         `json:"data_policy,omitempty"`
	Feed       *datafeed.Feed `json:"-"`
	// Checks are this kind's response checks, on top of every --check.
	Checks []string `json:"checks,omitempty"`
}

// Limits of a workload: kinds are numbered in a byte on every request in
// flight, and the kind table is walked by index.
const (
	maxKinds       = 16
	maxWeight      = 1_000_000
	maxTableLength = 1 << 16
)

// workloadKeys are the keys a [[request]] table may hold, in documentation
// order.
var workloadKeys = []string{"name", "weight", "method", "path", "headers", "body", "body_file", "data", "data_policy", "checks"}

// ErrWorkload wraps every refusal of a workload file.
var ErrWorkload = errors.New("workload")

// LoadWorkload reads and parses a workload file; a body_file is read
// relative to it.
func LoadWorkload(path string) (*Workload, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWorkload, err)
	}
	w, err := ParseWorkload(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	w.Source = path
	for i := range w.Kinds {
		if err := w.Kinds[i].readFiles(path); err != nil {
			return nil, fmt.Errorf("%s: %w: request %q: %w", path, ErrWorkload, w.Kinds[i].Name, err)
		}
	}
	return w, nil
}

// readFiles reads a kind's body_file and data file, each relative to the
// workload file at path; a data file's columns must hold every
// {{data.COLUMN}} the kind names.
func (k *RequestKind) readFiles(path string) error {
	rel := func(f string) string {
		if filepath.IsAbs(f) {
			return f
		}
		return filepath.Join(filepath.Dir(path), f)
	}
	var err error
	if k.BodyFile != "" {
		if k.Body, err = os.ReadFile(rel(k.BodyFile)); err != nil {
			return fmt.Errorf("body_file: %w", err)
		}
	}
	if k.Data == "" {
		return nil
	}
	policy, _ := datafeed.ParsePolicy(k.DataPolicy) // checked by parseKind
	if k.Feed, err = datafeed.Load(rel(k.Data), policy); err != nil {
		return fmt.Errorf("data: %w", err)
	}
	_, err = newRequestTemplate(k.Method, k.Path, "h", k.Headers, k.Body, placeholders{kinds: anyKind, columns: k.Feed.Column, feed: k.Feed})
	return err
}

// anyKind accepts every {{answered:NAME}}: for checks that look at
// something else (the workload's own check resolves them).
func anyKind(string) (int, error) { return 0, nil }

// anyColumn accepts every {{data.COLUMN}}: the file is read, and its
// columns checked, once the workload's location is known (LoadWorkload)
// or the run's --data is (Config.Validate).
func anyColumn(string) (int, error) { return 0, nil }

// ParseWorkload parses a workload's TOML text. Every problem is reported
// at once, one line each, naming its key (request[2].weight: ...).
func ParseWorkload(data []byte) (*Workload, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: invalid TOML: %w", ErrWorkload, err)
	}
	var errs []string
	bad := func(key, format string, args ...any) {
		errs = append(errs, key+": "+fmt.Sprintf(format, args...))
	}
	for _, key := range sortedKeys(doc) {
		if key != "request" {
			bad(key, "unknown key; a workload holds [[request]] tables only")
		}
	}
	w := &Workload{}
	switch list := doc["request"].(type) {
	case nil:
		bad("request", "no [[request]] tables: a workload needs at least one kind of request")
	case []map[string]any:
		for i, table := range list {
			w.Kinds = append(w.Kinds, parseKind(fmt.Sprintf("request[%d]", i+1), table, bad))
		}
	case []any: // request = [{...}, ...], inline
		for i, v := range list {
			key := fmt.Sprintf("request[%d]", i+1)
			table, ok := v.(map[string]any)
			if !ok {
				bad(key, "must be a table, got %s", tomlType(v))
				continue
			}
			w.Kinds = append(w.Kinds, parseKind(key, table, bad))
		}
	default:
		bad("request", "must be [[request]] tables, got %s", tomlType(doc["request"]))
	}
	if len(errs) == 0 && len(w.Kinds) == 0 {
		bad("request", "no [[request]] tables: a workload needs at least one kind of request")
	}
	if len(errs) == 0 {
		errs = append(errs, w.check()...)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrWorkload, strings.Join(errs, "\n"))
	}
	return w, nil
}

// parseKind reads one [[request]] table named key.
func parseKind(key string, table map[string]any, bad func(key, format string, args ...any)) RequestKind {
	k := RequestKind{Weight: 1, Method: "GET"}
	str := func(name string, into *string) {
		v, ok := table[name]
		if !ok {
			return
		}
		s, ok := v.(string)
		if !ok {
			bad(key+"."+name, "must be a string, got %s", tomlType(v))
			return
		}
		*into = s
	}
	str("name", &k.Name)
	str("method", &k.Method)
	str("path", &k.Path)
	str("body_file", &k.BodyFile)
	str("data", &k.Data)
	str("data_policy", &k.DataPolicy)
	if _, err := datafeed.ParsePolicy(k.DataPolicy); err != nil {
		bad(key+".data_policy", "%q: want once, loop or random", k.DataPolicy)
	}
	if k.DataPolicy != "" && k.Data == "" {
		bad(key+".data_policy", "only with data = \"FILE.csv\"")
	}
	if v, ok := table["checks"]; ok {
		list, isList := v.([]any)
		if !isList {
			bad(key+".checks", "must be a list of check expressions, got %s", tomlType(v))
		}
		for j, e := range list {
			s, ok := e.(string)
			if !ok {
				bad(fmt.Sprintf("%s.checks[%d]", key, j+1), "must be a string, got %s", tomlType(e))
				continue
			}
			if _, err := check.Parse(s); err != nil {
				bad(fmt.Sprintf("%s.checks[%d]", key, j+1), "%v", err)
				continue
			}
			k.Checks = append(k.Checks, s)
		}
	}
	var body string
	str("body", &body)
	k.Body = []byte(body)
	if v, ok := table["weight"]; ok {
		n, isInt := v.(int64)
		switch {
		case !isInt:
			bad(key+".weight", "must be a whole number, got %s", tomlType(v))
		case n < 1 || n > maxWeight:
			bad(key+".weight", "%d: want 1..%d (weights are relative: 80, 15 and 5 send 80%%, 15%% and 5%%)", n, maxWeight)
		default:
			k.Weight = int(n)
		}
	}
	if v, ok := table["headers"]; ok {
		list, isList := v.([]any)
		if !isList {
			bad(key+".headers", "must be a list of \"Name: value\" strings, got %s", tomlType(v))
		}
		for j, h := range list {
			s, ok := h.(string)
			name, _, hasColon := strings.Cut(s, ":")
			if !ok || !hasColon || strings.TrimSpace(name) == "" || strings.ContainsAny(s, "\r\n") {
				bad(fmt.Sprintf("%s.headers[%d]", key, j+1), "want \"Name: value\", got %v", h)
				continue
			}
			k.Headers = append(k.Headers, s)
		}
	}
	for _, name := range sortedKeys(table) {
		known := false
		for _, allowed := range workloadKeys {
			known = known || name == allowed
		}
		if !known {
			bad(key+"."+name, "unknown key; allowed: %s", strings.Join(workloadKeys, ", "))
		}
	}
	if k.Name == "" {
		bad(key+".name", "missing: every kind needs a name (it labels its results)")
	} else if strings.ContainsFunc(k.Name, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		bad(key+".name", "%q: want letters, digits, '-', '_' or '.'", k.Name)
	}
	if k.Method == "" || strings.ContainsAny(k.Method, " \t\r\n") {
		bad(key+".method", "%q: want a token like GET", k.Method)
	}
	if !strings.HasPrefix(k.Path, "/") || strings.ContainsAny(k.Path, " \t\r\n") {
		bad(key+".path", "%q: want a request target starting with / (no spaces)", k.Path)
	}
	if body != "" && k.BodyFile != "" {
		bad(key+".body", "give body or body_file, not both")
	}
	return k
}

// check is what takes every kind at once: unique names, the weights' table,
// the placeholders (a {{answered:NAME}} must name a kind that numbers its
// requests).
func (w *Workload) check() []string {
	var errs []string
	if len(w.Kinds) > maxKinds {
		errs = append(errs, fmt.Sprintf("request: %d kinds, at most %d", len(w.Kinds), maxKinds))
	}
	seen := map[string]int{}
	for i, k := range w.Kinds {
		if j, dup := seen[k.Name]; dup {
			errs = append(errs, fmt.Sprintf("request[%d].name: %q is also request[%d]'s", i+1, k.Name, j))
		}
		seen[k.Name] = i + 1
	}
	if len(errs) > 0 {
		return errs
	}
	if _, err := kindTable(w.weights()); err != nil {
		errs = append(errs, "request: "+err.Error())
	}
	for i, k := range w.Kinds {
		if _, err := newRequestTemplate(k.Method, k.Path, "h", k.Headers, k.Body, placeholders{kinds: w.resolver(), columns: anyColumn}); err != nil {
			errs = append(errs, fmt.Sprintf("request[%d] (%s): %v", i+1, k.Name, err))
		}
	}
	return errs
}

func (w *Workload) weights() []int {
	ws := make([]int, len(w.Kinds))
	for i, k := range w.Kinds {
		ws[i] = k.Weight
	}
	return ws
}

// resolver finds the kind a {{answered:NAME}} names; that kind must
// number its requests with {{seq}}, or there is nothing to refer to.
func (w *Workload) resolver() kindResolver {
	return func(name string) (int, error) {
		for i, k := range w.Kinds {
			if k.Name != name {
				continue
			}
			if !strings.Contains(k.Path, placeholderSeq) && !strings.Contains(string(k.Body), placeholderSeq) &&
				!strings.Contains(strings.Join(k.Headers, "\n"), placeholderSeq) {
				return 0, fmt.Errorf("{{answered:%s}}: kind %s has no {{seq}} in its path, headers or body, so its requests carry no number to refer to", name, name)
			}
			return i, nil
		}
		names := make([]string, len(w.Kinds))
		for i, k := range w.Kinds {
			names[i] = k.Name
		}
		return 0, fmt.Errorf("{{answered:%s}}: no kind named %s (kinds: %s)", name, name, strings.Join(names, ", "))
	}
}

// kindTable spreads kinds over a table in proportion to their weights
// (divided by their greatest common divisor), each kind's entries as evenly
// spaced as the others allow (smooth weighted round robin, as nginx
// balances upstreams): 80/15/5 gives a table of 20 with "status" once and
// "commit" every 6 or 7 entries. A thread that walks it sends each kind in
// its exact share over every 20 requests.
func kindTable(weights []int) ([]uint8, error) {
	g := 0
	for _, w := range weights {
		g = gcd(g, w)
	}
	total := 0
	for _, w := range weights {
		total += w / g
	}
	if total > maxTableLength {
		return nil, fmt.Errorf("the weights, divided by their greatest common divisor %d, add up to %d; keep that at most %d (round them)", g, total, maxTableLength)
	}
	table := make([]uint8, total)
	current := make([]int, len(weights))
	for i := range table {
		best := 0
		for k, w := range weights {
			current[k] += w / g
			if current[k] > current[best] {
				best = k
			}
		}
		current[best] -= total
		table[i] = uint8(best)
	}
	return table, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// tomlType names a decoded TOML value's type for an error.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
