package valgrind

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// What valgrind's log says when it stopped a program: an instruction its
// decoder lacks is named, with where Go ran it and the fix.

var (
	unrecognised = regexp.MustCompile(`Unrecognised instruction at address (0x[0-9a-fA-F]+)`)
	frameLine    = regexp.MustCompile(`^==\d+==\s+at 0x[0-9A-Fa-f]+: (.+)$`)
	vexBytes     = regexp.MustCompile(`unhandled instruction bytes: ((?:0x[0-9A-Fa-f]+ ?){1,3})`)
)

// knownOpcodes names the instructions a Go binary is known to meet under
// valgrind, by their first bytes as valgrind prints them, and the Go CPU
// option that keeps Go off them.
var knownOpcodes = map[string]struct{ name, option string }{"0xF 0x1 0xF9": {"RDTSCP", "rdtscp"}}

// ExplainLog turns a valgrind log that ends in an unrecognised
// instruction into one line naming it, where it was, and the fix; ok is
// false for any other log.
func ExplainLog(log []byte) (line string, ok bool) {
	lines := strings.Split(string(log), "\n")
	at := -1
	for i, l := range lines {
		if unrecognised.MatchString(l) {
			at = i
			break
		}
	}
	if at < 0 {
		return "", false
	}
	where := "an unknown place"
	if at+1 < len(lines) {
		if m := frameLine.FindStringSubmatch(strings.TrimSpace(lines[at+1])); m != nil {
			where = m[1]
		}
	}
	what, fix := "an instruction", "cpu.NAME=off (NAME one of Go's internal/cpu options, e.g. avx2)"
	if m := vexBytes.FindStringSubmatch(string(log)); m != nil {
		b := strings.TrimSpace(m[1])
		what = "the instruction " + b
		if k, ok := knownOpcodes[b]; ok {
			what, fix = k.name+" ("+b+")", "cpu."+k.option+"=off"
		}
	}
	return fmt.Sprintf("valgrind cannot execute %s in %s (SIGILL): its synthetic CPU offers a feature this CPU lacks; "+
		"turn it off for Go with --cost-godebug %s, or use a newer valgrind", what, where, fix), true
}

// ExplainLogFile is ExplainLog of the log at path (false when it cannot
// be read).
func ExplainLogFile(path string) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	return ExplainLog(data)
}

// Cause is ": <why valgrind stopped>" from its log: the explained
// unrecognised instruction, else valgrind's last log line, else nothing.
func Cause(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if line, ok := ExplainLog(data); ok {
		return ": " + line
	}
	if l := LastLine(data); l != "" {
		return " (valgrind: " + l + ")"
	}
	return ""
}

// LastLine is the last non-empty line of out (a command's output, a log).
func LastLine(out []byte) string {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	return strings.TrimSpace(string(lines[len(lines)-1]))
}
