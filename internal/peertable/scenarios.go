package peertable

// Scenario is one row group of the table: what was run, on which side, and
// which peers the ratios are taken for (weaseldb's, load_tester's).
type Scenario struct {
	Side     string
	Name     string
	Title    string
	Subjects []string
}

// The server's subjects: weaseldb started with only its listener (what a
// user gets) and in the harness's fitted setup.
var serverSubjects = []string{"weaseldb", "weaseldb_fitted"}

// Scenarios in the order the table shows them. The script writes samples
// under these names; any other name is a mistake in the script.
var Scenarios = []Scenario{
	{Side: "server", Name: "ok", Title: "GET /ok unpipelined (wrk -t1, closed loop)", Subjects: serverSubjects},
	{Side: "server", Name: "ok_pipelined16", Title: "GET /ok 16 deep (wrk -t1, 16 requests a write)", Subjects: serverSubjects},
	{Side: "client", Name: "closed", Title: "closed loop unpipelined against nginx", Subjects: []string{"load_tester"}},
	{Side: "client", Name: "closed_pipelined16", Title: "closed loop 16 deep against nginx", Subjects: []string{"load_tester"}},
	{Side: "client", Name: "open_loop", Title: "open loop at a fixed rate against nginx", Subjects: []string{"load_tester"}},
	{Side: "client", Name: "https11", Title: "HTTPS/1.1 against nginx (TLS 1.3)", Subjects: []string{"load_tester"}},
	{Side: "client", Name: "h2", Title: "h2 against nginx (10 connections × 10 streams)", Subjects: []string{"load_tester"}},
}

// peerRank orders a scenario's peers the same way in every table,
// whatever order the rounds ran them in: the subjects first, then the
// peers as docs/anchors.md lists them; a peer not listed goes last.
var peerRank = map[string]int{
	"weaseldb": 1, "weaseldb_fitted": 2, "nginx": 3, "gnet": 4, "fasthttp": 5, "nethttp": 6,
	"load_tester": 1, "wrk": 2, "wrk2": 3, "h2load": 4,
}

func rank(peer string) int {
	if r, ok := peerRank[peer]; ok {
		return r
	}
	return len(peerRank) + 1
}

func scenarioIndex(side, name string) int {
	for i, s := range Scenarios {
		if s.Side == side && s.Name == name {
			return i
		}
	}
	return -1
}
