package peertable

import (
	"bytes"
	"errors"
	"fmt"
)

// The markers between which generated text goes in README.md and
// docs/anchors.md.
const (
	BeginMarker = "<!-- peers:begin -->"
	EndMarker   = "<!-- peers:end -->"
)

// ErrNoMarkers is wrapped by Splice's error when a document lacks a marker.
var ErrNoMarkers = errors.New("peertable: markers missing")

// Placeholder stands between the markers until a run on a quiet machine
// replaces it: smoke runs' figures are not results.
const Placeholder = "_No quiet-machine run yet. Produce this table with `SPLICE=1 make peers` " +
	"(`scripts/compare_peers.sh --splice`) while nothing else runs on the machine; it replaces this text._\n"

// Splice replaces what lies between the one begin marker and the one end
// marker after it with content. Splicing the same content twice gives the
// same document.
func Splice(doc []byte, content string) ([]byte, error) {
	begin := bytes.Index(doc, []byte(BeginMarker))
	end := bytes.Index(doc, []byte(EndMarker))
	switch {
	case begin < 0 || end < 0:
		return nil, fmt.Errorf("%w: need %s and %s, each on its own line", ErrNoMarkers, BeginMarker, EndMarker)
	case end < begin:
		return nil, fmt.Errorf("%w: %s comes before %s", ErrNoMarkers, EndMarker, BeginMarker)
	case bytes.Count(doc, []byte(BeginMarker)) > 1 || bytes.Count(doc, []byte(EndMarker)) > 1:
		return nil, fmt.Errorf("peertable: more than one %s or %s: which to replace is ambiguous", BeginMarker, EndMarker)
	}
	var out bytes.Buffer
	out.Write(doc[:begin+len(BeginMarker)])
	out.WriteString("\n")
	out.WriteString(content)
	if len(content) > 0 && content[len(content)-1] != '\n' {
		out.WriteString("\n")
	}
	out.Write(doc[end:])
	return out.Bytes(), nil
}
