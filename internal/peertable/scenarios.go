package peertable

// Scenario is one row group of the table: what was run, on which side, and
// which peers the ratios are taken for (weaseldb's, load_tester's). A
// client scenario's target is the run's (Run.ClientTarget) unless it needs
// TLS, which only nginx serves here.
type Scenario struct {
	Side     string
	Name     string
	Title    string
	Subjects []string
	TLS      bool
}

// The server's subjects: weaseldb started with only its listener (what a
// user gets) and in the harness's fitted setup.
var serverSubjects = []string{"weaseldb", "weaseldb_fitted"}

// The client's subjects: load_tester on each of its engines (--io-backend
// epoll and io_uring).
var clientSubjects = []string{"load_tester", "load_tester_io_uring"}

// Scenarios in the order the table shows them. The script writes samples
// under these names; any other name is a mistake in the script.
var Scenarios = []Scenario{
	{Side: "server", Name: "ok", Title: "GET /ok unpipelined (wrk -t1, closed loop)", Subjects: serverSubjects},
	{Side: "server", Name: "ok_pipelined16", Title: "GET /ok 16 deep (wrk -t1, 16 requests a write)", Subjects: serverSubjects},
	{Side: "client", Name: "closed", Title: "closed loop unpipelined", Subjects: clientSubjects},
	{Side: "client", Name: "closed_pipelined16", Title: "closed loop 16 deep", Subjects: clientSubjects},
	{Side: "client", Name: "open_loop", Title: "open loop at a fixed rate", Subjects: clientSubjects},
	{Side: "client", Name: "https11", Title: "HTTPS/1.1 (TLS 1.3)", Subjects: clientSubjects, TLS: true},
	{Side: "client", Name: "h2", Title: "h2 (10 connections × 10 streams)", Subjects: clientSubjects, TLS: true},
}

// The client scenarios' targets (the script's CLIENT_TARGET).
const (
	TargetNginx    = "nginx"
	TargetWeaseldb = "weaseldb"
)

// heading is the scenario's title with, for a client, whom it ran against.
func (s Scenario) heading(clientTarget string) string {
	if s.Side != "client" {
		return s.Title
	}
	target := clientTarget
	if s.TLS || target == "" {
		target = TargetNginx
	}
	return s.Title + " against " + target
}

// peerRank orders a scenario's peers the same way in every table,
// whatever order the rounds ran them in: the subjects first, then the
// peers as docs/anchors.md lists them; a peer not listed goes last.
var peerRank = map[string]int{
	"weaseldb": 1, "weaseldb_fitted": 2, "nginx": 3, "gnet": 4, "fasthttp": 5, "nethttp": 6,
	"load_tester": 1, "load_tester_io_uring": 2, "wrk": 3, "wrk2": 4, "h2load": 5,
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
