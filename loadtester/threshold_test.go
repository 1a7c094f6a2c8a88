package loadtester

import (
	"testing"
	"time"
	"weaseldb/loadtester/result"
)

// TestThresholdsInResult: Run judges Config.Thresholds and the result
// carries them (and so its JSON).
func TestThresholdsInResult(t *testing.T) {
	s := startTestServer(t, "tcp", nil)
	cfg := testConfig(s)
	cfg.Duration = 300 * time.Millisecond
	for _, e := range []string{"p99<10s", "rps>1e12"} {
		th, err := result.ParseThreshold(e)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Thresholds = append(cfg.Thresholds, th)
	}
	res := runOK(t, cfg)
	if len(res.Thresholds) != 2 || !res.Thresholds[0].Pass || res.Thresholds[1].Pass || res.ThresholdsPass() {
		t.Errorf("thresholds %+v", res.Thresholds)
	}
}
