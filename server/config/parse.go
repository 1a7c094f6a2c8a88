package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Parse decodes TOML text over Default() and validates the result.
//
// The document is decoded into a generic map and walked by hand rather than
// decoded into tagged structs: the struct decoder stops at the first type
// mismatch, and a user should see every wrong key of a file at once. Walking
// the map also finds unknown keys (what MetaData.Undecoded would report) with
// the exact dotted key, including those inside server.interfaces entries.
func Parse(data []byte) (Config, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return Config{}, fmt.Errorf("invalid TOML: %w", err)
	}
	cfg := Default()
	var l errorList
	applyDocument(&cfg, doc, &l)
	// Validate even after type errors so that one pass reports everything,
	// but drop a range error for a key that already has a type error.
	var v errorList
	cfg.validate(&v)
	for _, fe := range v.errs {
		if !l.covers(fe.Key) {
			l.errs = append(l.errs, fe)
		}
	}
	if err := l.err(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// setter stores v (the decoded TOML value at key) into c, or records why not.
type setter func(c *Config, key string, v any, l *errorList)

type section struct {
	name   string
	fields []field
}

type field struct {
	name string
	set  setter
}

// schema lists every section and key in documentation order.
var schema = []section{
	{"server", []field{
		{"interfaces", func(c *Config, k string, v any, l *errorList) { setInterfaces(&c.Server.Interfaces, k, v, l) }},
		{"io_threads", intSetter(func(c *Config) *int { return &c.Server.IOThreads })},
		{"event_batch_size", intSetter(func(c *Config) *int { return &c.Server.EventBatchSize })},
		{"read_buffer_size", intSetter(func(c *Config) *int { return &c.Server.ReadBufferSize })},
		{"max_request_size_bytes", int64Setter(func(c *Config) *int64 { return &c.Server.MaxRequestSizeBytes })},
		{"io_cpus", func(c *Config, k string, v any, l *errorList) { setIntList(&c.Server.IOCPUs, k, v, l) }},
		{"header_timeout_seconds", secondsSetter(func(c *Config) *float64 { return &c.Server.HeaderTimeoutSeconds })},
		{"body_timeout_seconds", secondsSetter(func(c *Config) *float64 { return &c.Server.BodyTimeoutSeconds })},
		{"idle_timeout_seconds", secondsSetter(func(c *Config) *float64 { return &c.Server.IdleTimeoutSeconds })},
		{"write_timeout_seconds", secondsSetter(func(c *Config) *float64 { return &c.Server.WriteTimeoutSeconds })},
		{"max_connections", intSetter(func(c *Config) *int { return &c.Server.MaxConnections })},
		{"io_backend", stringSetter(func(c *Config) *string { return &c.Server.IOBackend })},
		{"io_uring_peek_ns", intSetter(func(c *Config) *int { return &c.Server.IOUringPeekNs })},
		{"io_uring_round_budget", intSetter(func(c *Config) *int { return &c.Server.IOUringRoundBudget })},
		{"admin_address", stringSetter(func(c *Config) *string { return &c.Server.AdminAddress })},
		{"listener", stringSetter(func(c *Config) *string { return &c.Server.Listener })},
		{"thread_names", setThreadNames},
	}},
	{"commit", []field{
		{"min_request_id_length", intSetter(func(c *Config) *int { return &c.Commit.MinRequestIDLength })},
		{"request_id_retention_hours", intSetter(func(c *Config) *int { return &c.Commit.RequestIDRetentionHours })},
		{"request_id_retention_versions", int64Setter(func(c *Config) *int64 { return &c.Commit.RequestIDRetentionVersions })},
		{"max_request_ids", intSetter(func(c *Config) *int { return &c.Commit.MaxRequestIDs })},
		{"pipeline_wait_strategy", stringSetter(func(c *Config) *string { return &c.Commit.PipelineWaitStrategy })},
		{"pipeline_release_threads", intSetter(func(c *Config) *int { return &c.Commit.PipelineReleaseThreads })},
		{"pipeline_cpus", func(c *Config, k string, v any, l *errorList) { setIntLists(&c.Commit.PipelineCPUs, k, v, l) }},
		{"pipeline_stage_waits", boolSetter(func(c *Config) *bool { return &c.Commit.PipelineStageWaits })},
	}},
	{"subscription", []field{
		{"max_buffer_size_bytes", int64Setter(func(c *Config) *int64 { return &c.Subscription.MaxBufferSizeBytes })},
		{"keepalive_interval_seconds", intSetter(func(c *Config) *int { return &c.Subscription.KeepaliveIntervalSeconds })},
		{"slow_consumer_grace_seconds", intSetter(func(c *Config) *int { return &c.Subscription.SlowConsumerGraceSeconds })},
	}},
	{"benchmark", []field{
		{"ok_resolve_iterations", intSetter(func(c *Config) *int { return &c.Benchmark.OkResolveIterations })},
		{"ok_resolve_spin_ns", int64Setter(func(c *Config) *int64 { return &c.Benchmark.OkResolveSpinNs })},
		{"commit_resolve_spin_ns", int64Setter(func(c *Config) *int64 { return &c.Benchmark.CommitResolveSpinNs })},
		{"status_resolve_spin_ns", int64Setter(func(c *Config) *int64 { return &c.Benchmark.StatusResolveSpinNs })},
		{"commit_resolve_iterations", intSetter(func(c *Config) *int { return &c.Benchmark.CommitResolveIterations })},
		{"status_resolve_iterations", intSetter(func(c *Config) *int { return &c.Benchmark.StatusResolveIterations })},
		{"ok_body_bytes", intSetter(func(c *Config) *int { return &c.Benchmark.OkBodyBytes })},
	}},
}

func sectionNames() []string {
	names := make([]string, len(schema))
	for i, s := range schema {
		names[i] = s.name
	}
	return names
}

func (s section) fieldNames() []string {
	names := make([]string, len(s.fields))
	for i, f := range s.fields {
		names[i] = f.name
	}
	return names
}

func applyDocument(c *Config, doc map[string]any, l *errorList) {
	for _, sec := range schema {
		raw, ok := doc[sec.name]
		if !ok {
			continue
		}
		table, ok := raw.(map[string]any)
		if !ok {
			l.add(sec.name, "must be a table ([%s]), got %s", sec.name, typeName(raw))
			continue
		}
		applySection(c, sec, table, l)
	}
	for _, name := range sortedKeys(doc) {
		if !slices.Contains(sectionNames(), name) {
			l.add(name, "unknown section or key; allowed sections: %s", strings.Join(sectionNames(), ", "))
		}
	}
}

func applySection(c *Config, sec section, table map[string]any, l *errorList) {
	for _, f := range sec.fields {
		if v, ok := table[f.name]; ok {
			f.set(c, sec.name+"."+f.name, v, l)
		}
	}
	for _, name := range sortedKeys(table) {
		if !slices.Contains(sec.fieldNames(), name) {
			l.add(sec.name+"."+name, "unknown key; allowed keys in [%s]: %s", sec.name, strings.Join(sec.fieldNames(), ", "))
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// typeName names a decoded TOML value's type in TOML's own words.
func typeName(v any) string {
	switch v.(type) {
	case int64:
		return "integer"
	case float64:
		return "float"
	case string:
		return "string"
	case bool:
		return "boolean"
	case []any, []map[string]any:
		return "array"
	case map[string]any:
		return "table"
	case time.Time:
		return "datetime"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func asInt64(key string, v any, l *errorList) (int64, bool) {
	n, ok := v.(int64)
	if !ok {
		l.add(key, "must be an integer, got %s", typeName(v))
	}
	return n, ok
}

func intSetter(dst func(*Config) *int) setter {
	return func(c *Config, key string, v any, l *errorList) {
		if n, ok := asInt64(key, v, l); ok {
			*dst(c) = int(n)
		}
	}
}

func boolSetter(dst func(*Config) *bool) setter {
	return func(c *Config, key string, v any, l *errorList) {
		b, ok := v.(bool)
		if !ok {
			l.add(key, "must be a boolean (true or false), got %s", typeName(v))
			return
		}
		*dst(c) = b
	}
}

func int64Setter(dst func(*Config) *int64) setter {
	return func(c *Config, key string, v any, l *errorList) {
		if n, ok := asInt64(key, v, l); ok {
			*dst(c) = n
		}
	}
}

// secondsSetter takes a number of seconds, integer or fractional.
func secondsSetter(dst func(*Config) *float64) setter {
	return func(c *Config, key string, v any, l *errorList) {
		switch n := v.(type) {
		case int64:
			*dst(c) = float64(n)
		case float64:
			*dst(c) = n
		default:
			l.add(key, "must be a number of seconds, got %s", typeName(v))
		}
	}
}

// setThreadNames takes a TOML boolean (true, false) or the string "auto".
func setThreadNames(c *Config, key string, v any, l *errorList) {
	switch v := v.(type) {
	case bool:
		c.Server.ThreadNames = ThreadNamesOff
		if v {
			c.Server.ThreadNames = ThreadNamesOn
		}
	case string:
		if v != string(ThreadNamesAuto) {
			l.add(key, "must be true, false or \"auto\", got %q", v)
			return
		}
		c.Server.ThreadNames = ThreadNamesAuto
	default:
		l.add(key, "must be true, false or \"auto\", got %s", typeName(v))
	}
}

func stringSetter(dst func(*Config) *string) setter {
	return func(c *Config, key string, v any, l *errorList) {
		s, ok := v.(string)
		if !ok {
			l.add(key, "must be a string, got %s", typeName(v))
			return
		}
		*dst(c) = s
	}
}

// asArray accepts both array forms the decoder yields: []any for inline
// arrays and []map[string]any for arrays of tables ([[server.interfaces]]).
func asArray(key string, v any, l *errorList) ([]any, bool) {
	switch a := v.(type) {
	case []any:
		return a, true
	case []map[string]any:
		out := make([]any, len(a))
		for i, m := range a {
			out[i] = m
		}
		return out, true
	default:
		l.add(key, "must be an array, got %s", typeName(v))
		return nil, false
	}
}

func setIntList(dst *[]int, key string, v any, l *errorList) {
	items, ok := asArray(key, v, l)
	if !ok {
		return
	}
	out := make([]int, 0, len(items))
	for i, item := range items {
		if n, ok := asInt64(fmt.Sprintf("%s[%d]", key, i), item, l); ok {
			out = append(out, int(n))
		}
	}
	*dst = out
}

func setIntLists(dst *[][]int, key string, v any, l *errorList) {
	items, ok := asArray(key, v, l)
	if !ok {
		return
	}
	out := make([][]int, len(items))
	for i, item := range items {
		setIntList(&out[i], fmt.Sprintf("%s[%d]", key, i), item, l)
	}
	*dst = out
}

var interfaceKeys = []string{"type", "address", "port", "path"}

func setInterfaces(dst *[]Interface, key string, v any, l *errorList) {
	items, ok := asArray(key, v, l)
	if !ok {
		return
	}
	out := make([]Interface, len(items))
	for i, item := range items {
		ikey := fmt.Sprintf("%s[%d]", key, i)
		table, ok := item.(map[string]any)
		if !ok {
			l.add(ikey, "must be a table like { type = \"tcp\", address = \"127.0.0.1\", port = 8080 }, got %s", typeName(item))
			continue
		}
		out[i] = decodeInterface(ikey, table, l)
	}
	*dst = out
}

func decodeInterface(key string, table map[string]any, l *errorList) Interface {
	var iface Interface
	for _, name := range sortedKeys(table) {
		v := table[name]
		fkey := key + "." + name
		switch name {
		case "type", "address", "path":
			s, ok := v.(string)
			if !ok {
				l.add(fkey, "must be a string, got %s", typeName(v))
				continue
			}
			switch name {
			case "type":
				iface.Type = s
			case "address":
				iface.Address = s
			case "path":
				iface.Path = s
			}
		case "port":
			if n, ok := asInt64(fkey, v, l); ok {
				iface.Port = int(n)
			}
		default:
			l.add(fkey, "unknown key; allowed keys: %s", strings.Join(interfaceKeys, ", "))
		}
	}
	if _, ok := table["type"]; !ok {
		l.add(key+".type", `is required: "tcp" or "unix"`)
	}
	return iface
}
