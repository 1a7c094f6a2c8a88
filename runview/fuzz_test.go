package runview

import (
	"bytes"
	"encoding/json"
	"testing"
	"weaseldb/loadtester/result"
)

// Whatever a result file holds, its page is made or refused with an
// error, never a panic.
func FuzzResultPage(f *testing.F) {
	seed, err := json.Marshal(synthetic(f, 3))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"version":2,"due":1,"intervals":[{"t_s":1e308,"requests_per_sec":-1}],"latency_ns":{"p99":-5}}`))
	f.Add([]byte(`{"version":2,"requests":1,"histogram":"HISTFAAAAB"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var res result.Result
		if json.Unmarshal(data, &res) != nil {
			return
		}
		p, err := ResultPage(&res, []string{"fuzz.json"})
		if err != nil {
			return // refused: what the command says in one line
		}
		var b bytes.Buffer
		if err := p.Write(&b); err != nil {
			t.Fatalf("a page made is written: %v", err)
		}
	})
}
