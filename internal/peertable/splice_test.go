package peertable

import (
	"errors"
	"strings"
	"testing"
)

func TestSplice(t *testing.T) {
	doc := "# Title\n\nbefore\n" + BeginMarker + "\nold text\n" + EndMarker + "\nafter\n"
	for _, c := range []struct{ name, content, want string }{
		{"replaces", "new table\n", "# Title\n\nbefore\n" + BeginMarker + "\nnew table\n" + EndMarker + "\nafter\n"},
		{"adds the missing newline", "new table", "# Title\n\nbefore\n" + BeginMarker + "\nnew table\n" + EndMarker + "\nafter\n"},
		{"empty content", "", "# Title\n\nbefore\n" + BeginMarker + "\n" + EndMarker + "\nafter\n"},
	} {
		got, err := Splice([]byte(doc), c.content)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(got) != c.want {
			t.Errorf("%s:\n%q\nwant\n%q", c.name, got, c.want)
		}
		again, err := Splice(got, c.content)
		if err != nil || string(again) != string(got) {
			t.Errorf("%s: not idempotent: %q (%v)", c.name, again, err)
		}
	}
}

func TestSpliceErrors(t *testing.T) {
	for _, c := range []struct {
		name, doc, err string
		noMarkers      bool
	}{
		{"no markers", "# Title\n", "markers missing", true},
		{"begin only", BeginMarker + "\n", "markers missing", true},
		{"end only", EndMarker + "\n", "markers missing", true},
		{"reversed", EndMarker + "\n" + BeginMarker + "\n", "comes before", true},
		{"two begins", BeginMarker + BeginMarker + EndMarker, "more than one", false},
	} {
		_, err := Splice([]byte(c.doc), "x")
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.err)
			continue
		}
		if errors.Is(err, ErrNoMarkers) != c.noMarkers {
			t.Errorf("%s: errors.Is(ErrNoMarkers) = %v", c.name, !c.noMarkers)
		}
	}
}
