package loadtester

import (
	"fmt"
	"testing"
	"time"
)

// A thread's load mode is chosen once from its run's config: the open
// loop for a rate, the ramped closed loop for --concurrency-stages, the
// closed loop otherwise; only the open loop is paced.
func TestLoadModeFollowsTheConfig(t *testing.T) {
	tests := []struct {
		name  string
		set   func(*Config)
		want  string
		paced bool
	}{
		{"closed loop", func(*Config) {}, "*loadtester.closedLoop", false},
		{"connection ramp", func(c *Config) { c.ConcurrencyStages, c.Concurrency = "1s:4", 4 }, "*loadtester.rampedLoop", false},
		{"open loop", func(c *Config) { c.Rate = 1000 }, "*loadtester.openLoop", true},
		{"open loop with stages", func(c *Config) { c.Stages, c.Rate = "1s:1000", 1000 }, "*loadtester.openLoop", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.set(&cfg)
			kinds, table, err := newKinds(&cfg, "run")
			if err != nil {
				t.Fatal(err)
			}
			r := &runner{cfg: cfg, tmpl: kinds[0].tmpl, kinds: kinds, table: table, base: time.Now(), connReqs: make(chan connRequest, 16)}
			r.ramp = newConnRamp(&r.cfg)
			r.windowEnd.Store(int64(time.Hour))
			th, err := newNetThread(r, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(th.shutdown)
			if got := fmt.Sprintf("%T", th.mode); got != tt.want || th.mode.paced() != tt.paced {
				t.Errorf("mode %s paced %v, want %s paced %v", got, th.mode.paced(), tt.want, tt.paced)
			}
		})
	}
}
