package serverproc

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/BurntSushi/toml"
)

// ParseConfig reads a TOML config into a document whose keys are kept as
// they are (unknown ones included: the server, not its supervisor,
// validates them). Empty input is an empty document.
func ParseConfig(data []byte) (map[string]any, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parsing config: %w", err)
	}
	if doc == nil {
		doc = map[string]any{}
	}
	return doc, nil
}

// UnixInterface is a [server] interfaces entry for a unix socket.
func UnixInterface(path string) map[string]any {
	return map[string]any{"type": "unix", "path": path}
}

// TCPInterface is a [server] interfaces entry for a TCP address. Port 0
// lets the kernel choose a free port: read it from Process.Listeners, so no
// other process can take it between choosing and binding.
func TCPInterface(address string, port int) map[string]any {
	return map[string]any{"type": "tcp", "address": address, "port": port}
}

// SetInterfaces replaces the document's [server] interfaces, creating the
// [server] table if needed and keeping every other key.
func SetInterfaces(doc map[string]any, ifaces ...map[string]any) error {
	server, ok := doc["server"].(map[string]any)
	if !ok {
		if _, exists := doc["server"]; exists {
			return errors.New("config: [server] is not a table")
		}
		server = map[string]any{}
		doc["server"] = server
	}
	server["interfaces"] = ifaces
	return nil
}

// EncodeConfig renders a config document as TOML, through the encoder: the
// server reads back exactly what was meant, whatever the values contain.
func EncodeConfig(doc map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(doc); err != nil {
		return nil, fmt.Errorf("writing config: %w", err)
	}
	return buf.Bytes(), nil
}

// WriteConfig writes a config document to path as TOML.
func WriteConfig(path string, doc map[string]any) error {
	data, err := EncodeConfig(doc)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
