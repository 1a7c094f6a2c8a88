package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// defaultConfig is the gate's built-in server config (gate embeds it).
func defaultConfig(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "default_config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRewriteConfig(t *testing.T) {
	in := []byte(`
# comment
[server]
interfaces = [{ type = "tcp", address = "0.0.0.0", port = 8123 }, { type = "unix", path = "x.sock" }]
io_threads = 3
[benchmark]
ok_resolve_iterations = 4000
[unknown_to_the_gate]
kept = "yes"
`)
	tests := []struct {
		target Target
		want   map[string]any
	}{
		{Target{Network: "unix", Path: "/tmp/a.sock"}, map[string]any{"type": "unix", "path": "/tmp/a.sock"}},
		{Target{Network: "tcp", Host: "127.0.0.1", Port: 4321}, map[string]any{"type": "tcp", "address": "127.0.0.1", "port": int64(4321)}},
	}
	for _, tt := range tests {
		out, err := RewriteConfig(in, tt.target)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := toml.Unmarshal(out, &doc); err != nil {
			t.Fatalf("rewritten config does not parse: %v\n%s", err, out)
		}
		server := doc["server"].(map[string]any)
		ifaces := server["interfaces"].([]map[string]any)
		if len(ifaces) != 1 {
			t.Fatalf("want one interface, got %v", ifaces)
		}
		for k, v := range tt.want {
			if ifaces[0][k] != v {
				t.Errorf("interface %s = %v, want %v", k, ifaces[0][k], v)
			}
		}
		if server["io_threads"] != int64(3) || doc["benchmark"].(map[string]any)["ok_resolve_iterations"] != int64(4000) ||
			doc["unknown_to_the_gate"].(map[string]any)["kept"] != "yes" {
			t.Errorf("other keys not kept:\n%s", out)
		}
	}
	if _, err := RewriteConfig([]byte("server = 3"), tt0()); err == nil {
		t.Error("a [server] that is not a table should be an error")
	}
	if _, err := RewriteConfig([]byte("[server"), tt0()); err == nil {
		t.Error("broken TOML should be an error")
	}
	if out, err := RewriteConfig(nil, tt0()); err != nil || !strings.Contains(string(out), "interfaces") {
		t.Errorf("empty config: %v\n%s", err, out)
	}
	if _, err := RewriteConfig(defaultConfig(t), tt0()); err != nil {
		t.Errorf("the built-in default: %v", err)
	}
}

func tt0() Target { return Target{Network: "unix", Path: "/tmp/x.sock"} }

func FuzzRewriteConfig(f *testing.F) {
	f.Add(defaultConfig(f))
	f.Add([]byte("[server]\ninterfaces = 3\n"))
	f.Add([]byte("server = 1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := RewriteConfig(data, tt0())
		if err != nil {
			return
		}
		var doc map[string]any
		if err := toml.Unmarshal(out, &doc); err != nil {
			t.Fatalf("accepted config rewritten into invalid TOML: %v", err)
		}
	})
}
