package artifacts

import "testing"

func TestSpins(t *testing.T) {
	for s, want := range map[string]bool{"WaitIfStageEmpty": false, "WaitIfUpstreamIdle": true, "Never": true} {
		if Spins(s) != want {
			t.Errorf("Spins(%s) = %v", s, !want)
		}
	}
}
