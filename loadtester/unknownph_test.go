package loadtester

import (
	"slices"
	"testing"
)

// unknownPlaceholders names each "{{...}}" no placeholder reads, once, in
// the order met: they are sent as they are, and the run warns of them.
func TestUnknownPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"/a/{{seq}}/{{seq%4}}/{{uuid}}/{{run}}/{{data.id}}/{{raw:data.id}}/{{json:data.id}}/{{answered:x}}", nil},
		{"/a/{{sequence}}?u={{uid}}&v={{uid}}", []string{"{{sequence}}", "{{uid}}"}},
		{`{"a":"{{Seq}}"}`, []string{"{{Seq}}"}},
		{"{{ no end", []string{"{{ no end"}},
		{`{"a":{"b":1}}`, nil},
	} {
		if got := unknownPlaceholders(nil, tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.text, got, tc.want)
		}
	}
}
