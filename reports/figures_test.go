package reports

import (
	"encoding/json"
	"testing"
)

func TestLookupField(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"a": {"b": [1, {"c": 2.5}, [7, 8]]}, "ok": true, "s": "x"}`), &doc); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path    string
		want    float64
		wantErr bool
	}{
		{"a.b[0]", 1, false},
		{"a.b[1].c", 2.5, false},
		{"a.b[2][1]", 8, false},
		{"ok", 1, false},
		{"s", 0, true},
		{"a.x", 0, true},
		{"a.b[3]", 0, true},
		{"a.b[-1]", 0, true},
		{"a.b[x]", 0, true},
		{"a.b[1", 0, true},
		{"ok.deeper", 0, true},
	}
	for _, tt := range tests {
		got, err := LookupNumber(doc, tt.path)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("LookupNumber(%q) = %v, %v; want %v, error %v", tt.path, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzLookupField(f *testing.F) {
	f.Add(`{"a": {"b": [1, {"c": 2}]}}`, "a.b[1].c")
	f.Add(`[1, 2]`, "[1]")
	f.Add(`{"x": 1}`, "x[0][")
	f.Fuzz(func(t *testing.T, doc, path string) {
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			return
		}
		_, _ = LookupField(v, path) // must not panic
		_, _ = LookupNumber(v, path)
	})
}
