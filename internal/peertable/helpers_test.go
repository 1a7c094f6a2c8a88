package peertable

func load(side, scenario, peer string, round int, requests, seconds, cpuNs float64, switches ...float64) Sample {
	s := Sample{Kind: KindLoad, Side: side, Scenario: scenario, Peer: peer, Round: round, Requests: requests, Seconds: seconds, CPUNs: cpuNs}
	if len(switches) > 0 {
		s.Switches = &switches[0]
	}
	return s
}

func count(kind, side, scenario, peer string, requests, n float64) Sample {
	return Sample{Kind: kind, Side: side, Scenario: scenario, Peer: peer, Requests: requests, Count: n}
}

func withAll(s Sample, all float64) Sample {
	s.CountAll = all
	return s
}

// withSys gives a load sample its system CPU (the rest of CPUNs is user).
func withSys(s Sample, sys float64) Sample {
	s.SysNs = &sys
	return s
}

func ptr(x float64) *float64 { return &x }

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
