package cost

import "weaseldb/gate/result"

// Scenario is what the cost tier needs of one of the gate's scenarios: its
// name, its load, the setup loads that run before it, and its own cost
// load where it has one. The gate's scenarios file decodes and checks
// them (gate/scenario.go); this package only runs them.
type Scenario struct {
	Name string
	result.LoadShape
	Setup []result.SetupLoad
	Cost  Shape
}

// Shape is a scenario's own cost-tier load: its requests and rate, and
// more load_tester flags (a pipelined scenario sends its requests in
// bursts with --send-slack, so that the server reads each burst at once
// on both sides).
type Shape struct {
	Requests int      `toml:"requests" json:"requests,omitempty"`
	Rate     float64  `toml:"rate" json:"rate,omitempty"`
	LoadArgs []string `toml:"load_args" json:"load_args,omitempty"`
}
