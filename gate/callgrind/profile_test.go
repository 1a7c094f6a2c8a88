package callgrind

import (
	"strings"
	"testing"
)

// A small file in callgrind's format with what the reader must handle:
// name compression, a call's inclusive cost (not the caller's own), a
// recursion suffix, relative and repeated positions, and totals.
const sampleCallgrind = `# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd:  /x/weaseldb --config c.toml
part: 1

desc: I1 cache:
positions: line
events: Ir
summary: 1000

ob=(1) /x/weaseldb
fl=(1) /x/a.go
fn=(1) main.handle
10 100
+2 50
cfl=(1)
cfn=(2) runtime.findRunnable
calls=3 20
* 700
fn=(2)
20 300
fn=(3) main.recurse'2
-5 40
* 10
fn=(4) main.recurse
30 5

totals: 505
`

func TestParseCallgrind(t *testing.T) {
	p, err := Parse(strings.NewReader(sampleCallgrind))
	if err != nil {
		t.Fatal(err)
	}
	if p.Command != "/x/weaseldb --config c.toml" || len(p.Events) != 1 || p.Events[0] != "Ir" {
		t.Errorf("header: command %q, events %v", p.Command, p.Events)
	}
	if p.Instructions() != 505 {
		t.Errorf("totals %d, want 505 (totals: wins over summary:)", p.Instructions())
	}
	want := map[string]int64{"main.handle": 150, "runtime.findRunnable": 300, "main.recurse": 55}
	for fn, v := range want {
		if p.Self[fn] != v {
			t.Errorf("self cost of %s = %d, want %d (all: %v)", fn, p.Self[fn], v, p.Self)
		}
	}
	if len(p.Self) != len(want) {
		t.Errorf("functions %v, want %v", p.Self, want)
	}
	kept, left := FilteredInstructions(p)
	if kept != 205 || left != 300 {
		t.Errorf("filtered: kept %d left %d, want 205 and 300 (findRunnable is the scheduler's)", kept, left)
	}
}

func TestParseCallgrindPositions(t *testing.T) {
	in := "events: Ir Dr\npositions: instr line\nfn=f\n0x10 3 7 1\n+4 -1 2\n* * 1 9\ntotals: 10 10\n"
	p, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if p.Self["f"] != 10 {
		t.Errorf("self %d, want 10 (the first event of each line)", p.Self["f"])
	}
}

func TestParseCallgrindErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", "no events"},
		{"not callgrind", "hello world\n", "neither a cost line nor a key"},
		{"undefined name", "events: Ir\nfn=(7)\n1 2\n", "used before it was defined"},
		{"bad cost", "events: Ir\nfn=f\n1 x\n", "not a count"},
		{"negative cost", "events: Ir\nfn=f\n1 -3\n", "not a count"},
		{"bad position", "events: Ir\nfn=f\n0xzz 3\n", "bad position"},
		{"bad positions header", "positions: a b c\nevents: Ir\n", "positions"},
		{"unclosed name", "events: Ir\nfn=(3 f\n", "no closing parenthesis"},
		{"bad totals", "events: Ir\ntotals: many\n", "totals"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestBaseFunction(t *testing.T) {
	for in, want := range map[string]string{"f'2": "f", "f'12": "f", "f": "f", "f'": "f'", "it's'x": "it's'x", "a'b'3": "a'b"} {
		if got := baseFunction(in); got != want {
			t.Errorf("baseFunction(%q) = %q, want %q", in, got, want)
		}
	}
}

// The reader never panics and never accepts negative costs, whatever the
// file holds.
func FuzzParseCallgrind(f *testing.F) {
	f.Add(sampleCallgrind)
	f.Add("events: Ir\nfn=(1) a\n1 2\ncfn=(1)\ncalls=1 2\n3 4\n")
	f.Add("events: Ir\npositions: instr line\nfn=f\n0x10 +3 7\n")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := Parse(strings.NewReader(in))
		if err != nil {
			return
		}
		for fn, v := range p.Self {
			if v < 0 {
				t.Fatalf("negative self cost %d for %q", v, fn)
			}
		}
		FilteredInstructions(p)
	})
}
