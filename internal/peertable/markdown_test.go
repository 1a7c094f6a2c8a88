package peertable

import (
	"strings"
	"testing"
)

func TestMarkdown(t *testing.T) {
	tab, err := Build(fixture(), Machine{CPUModel: "AMD EPYC 7B13", CPUFamily: "25", CPUs: 2, Kernel: "6.18.0", GoVersion: "go1.26.8"},
		Run{Date: "2026-12-03", Rounds: 3, DurationS: 4, Setup: "Unpinned."})
	if err != nil {
		t.Fatal(err)
	}
	md := Markdown(tab)
	for _, want := range []string{
		"on 2026-12-03: AMD EPYC 7B13 (CPU family 25), 2 CPUs, Linux 6.18.0, go1.26.8; 3 interleaved rounds of 4.0 s",
		" Setup: Unpinned.",
		"**Server: GET /ok 16 deep",
		"| weaseldb (syscalls_per_request: strace not installed) | 1,000,000 | 2.22 µs | – | 0.001 | 900 | – |",
		"| gnet | 900,000 | 2.00 µs | 75% | 0.001 | 1,000 | 0.25 |",
		"| weaseldb / gnet | 1.20× (1.00–1.25) |",
		"| wrk2 | skipped: wrk2 not installed | | | | | |",
		"| weaseldb / gnet req/s, ok_pipelined16 ≥ 1.20× | 1.20× | met |",
		"| weaseldb / fasthttp req/s, ok_pipelined16 ≥ 1.50× | – | **not measured** |",
		"| load_tester / wrk2 CPU per request, open_loop ≤ 0.80× | – | **not measured** |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Client: closed loop unpipelined") {
		t.Error("a scenario with no samples got a section")
	}
}
