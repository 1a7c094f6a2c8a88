package serverproc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"unicode/utf8"

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
// server reads back exactly what was meant, whatever the values contain. A
// key or string that is not valid UTF-8 (a unix socket path of raw bytes,
// say) is refused, naming where it is: TOML cannot hold it, and the encoder
// would write it anyway as a file that does not parse.
func EncodeConfig(doc map[string]any) ([]byte, error) {
	if err := checkUTF8("", doc); err != nil {
		return nil, fmt.Errorf("writing config: %w", err)
	}
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

// checkUTF8 walks a config document and returns an error naming the first
// key or string value (in key order) that is not valid UTF-8.
func checkUTF8(at string, v any) error {
	switch v := v.(type) {
	case string:
		if !utf8.ValidString(v) {
			return fmt.Errorf("%s: %q is not valid UTF-8, which TOML requires", at, v)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			name := k
			if at != "" {
				name = at + "." + k
			}
			if !utf8.ValidString(k) {
				return fmt.Errorf("key %q is not valid UTF-8, which TOML requires", name)
			}
			if err := checkUTF8(name, v[k]); err != nil {
				return err
			}
		}
	case []map[string]any:
		for i, e := range v {
			if err := checkUTF8(at+"["+strconv.Itoa(i)+"]", e); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := checkUTF8(at+"["+strconv.Itoa(i)+"]", e); err != nil {
				return err
			}
		}
	case []string:
		for i, e := range v {
			if err := checkUTF8(at+"["+strconv.Itoa(i)+"]", e); err != nil {
				return err
			}
		}
	}
	return nil
}
