package callgrind

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A callgrind profile, as valgrind --tool=callgrind writes it (the format is
// documented in valgrind's "Callgrind Format Specification"). The cost tier
// needs one figure from it: the instructions (event Ir) each function spent
// itself, so that a documented set of functions whose cost follows the
// clock rather than the work (the scheduler, parking, sysmon; filter.go)
// can be left out. This reads valgrind's own file; it is not a profiler.

// Profile is what one dump holds.
type Profile struct {
	Command string   // the profiled command line (cmd:)
	Events  []string // the events counted, in the order of the cost columns
	// Totals are the dump's totals per event (totals:, else summary:).
	Totals []int64
	// Self is each function's own cost of the first event (Ir:
	// instructions), callees excluded. A function valgrind names with a
	// recursion suffix (fn'2) is merged into its plain name.
	Self map[string]int64
}

// Instructions is the dump's total of the first event.
func (p *Profile) Instructions() int64 {
	if len(p.Totals) == 0 {
		return 0
	}
	return p.Totals[0]
}

// maxLine bounds one line of the file (function names of Go
// generics run to a few kilobytes).
const maxLine = 1 << 20

// Parse reads one callgrind output file. Its errors name the line.
func Parse(r io.Reader) (*Profile, error) {
	p := &Profile{Self: map[string]int64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	st := parseState{positions: 1, fnNames: map[string]string{}}
	for n := 1; sc.Scan(); n++ {
		if err := st.line(p, sc.Text()); err != nil {
			return nil, fmt.Errorf("callgrind line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("callgrind: %w", err)
	}
	if len(p.Events) == 0 {
		return nil, errors.New("callgrind: no events: line (not a callgrind file?)")
	}
	if len(p.Totals) == 0 {
		// Older writers give only per-line costs: their sum is the total.
		var sum int64
		for _, v := range p.Self {
			sum += v
		}
		p.Totals = []int64{sum}
	}
	return p, nil
}

// parseState is the reader's context between lines.
type parseState struct {
	positions int               // position columns before the costs (1: line; 2: instr line)
	fnNames   map[string]string // name compression: "(12)" -> the name it was given
	fn        string            // the function the cost lines belong to
	afterCall bool              // the next cost line is a call's inclusive cost
}

func (st *parseState) line(p *Profile, line string) error {
	if line == "" || line[0] == '#' {
		return nil
	}
	if c := line[0]; (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*' {
		return st.cost(p, line)
	}
	key, val, ok := strings.Cut(line, "=")
	if ok && !strings.Contains(key, ":") && !strings.Contains(key, " ") {
		return st.spec(key, val)
	}
	key, val, ok = strings.Cut(line, ":")
	if !ok {
		return fmt.Errorf("neither a cost line nor a key: %.60q", line)
	}
	val = strings.TrimSpace(val)
	switch key {
	case "cmd":
		p.Command = val
	case "positions":
		st.positions = len(strings.Fields(val))
		if st.positions == 0 || st.positions > 2 {
			return fmt.Errorf("positions: %q: want line, or instr line", val)
		}
	case "events":
		p.Events = strings.Fields(val)
	case "totals", "summary":
		costs, err := parseCosts(strings.Fields(val))
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if key == "totals" || p.Totals == nil {
			p.Totals = costs
		}
	}
	return nil
}

// spec handles a name line (fn=, cfn=, fl=, ...) or a call line.
func (st *parseState) spec(key, val string) error {
	switch key {
	case "fn":
		name, err := st.name(val)
		if err != nil {
			return err
		}
		st.fn, st.afterCall = baseFunction(name), false
	case "cfn":
		if _, err := st.name(val); err != nil {
			return err
		}
	case "calls":
		st.afterCall = true
	}
	// ob, fl, fi, fe, cob, cfi, cfl, jump, jcnd: files, objects and jumps
	// do not change whose cost a line is.
	return nil
}

// name resolves callgrind's name compression: "(id) name" defines id,
// "(id)" refers to it, a plain name is itself.
func (st *parseState) name(val string) (string, error) {
	if !strings.HasPrefix(val, "(") {
		return val, nil
	}
	end := strings.IndexByte(val, ')')
	if end < 0 {
		return "", fmt.Errorf("name %.60q: no closing parenthesis", val)
	}
	id, rest := val[:end+1], strings.TrimSpace(val[end+1:])
	if rest != "" {
		st.fnNames[id] = rest
		return rest, nil
	}
	name, ok := st.fnNames[id]
	if !ok {
		return "", fmt.Errorf("name %s used before it was defined", id)
	}
	return name, nil
}

// cost adds a cost line to the current function's own cost, unless it is
// the inclusive cost of a call (the line after calls=).
func (st *parseState) cost(p *Profile, line string) error {
	fields := strings.Fields(line)
	if len(fields) < st.positions {
		return fmt.Errorf("cost line %.60q: fewer than %d positions", line, st.positions)
	}
	for _, pos := range fields[:st.positions] {
		if !validPosition(pos) {
			return fmt.Errorf("cost line %.60q: bad position %q", line, pos)
		}
	}
	costs, err := parseCosts(fields[st.positions:])
	if err != nil {
		return fmt.Errorf("cost line %.60q: %w", line, err)
	}
	if st.afterCall {
		st.afterCall = false
		return nil
	}
	if len(costs) > 0 {
		p.Self[st.fn] += costs[0]
	}
	return nil
}

// validPosition: a number (decimal or 0x hex), +N or -N relative to the
// last one, or * for the same.
func validPosition(s string) bool {
	if s == "*" {
		return true
	}
	s = strings.TrimLeft(s, "+-")
	if strings.HasPrefix(s, "0x") {
		_, err := strconv.ParseUint(s[2:], 16, 64)
		return err == nil
	}
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

func parseCosts(fields []string) ([]int64, error) {
	costs := make([]int64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("cost %q: not a count", f)
		}
		costs[i] = v
	}
	return costs, nil
}

// baseFunction strips callgrind's recursion-depth suffix (fn'2): the cost
// of a function is the same work whatever the depth it ran at.
func baseFunction(name string) string {
	i := strings.LastIndexByte(name, '\'')
	if i < 0 || i == len(name)-1 {
		return name
	}
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' {
			return name
		}
	}
	return name[:i]
}
