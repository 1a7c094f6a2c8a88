package loadtester

import (
	"fmt"
	"slices"
	"strings"
)

// knownPlaceholders are the starts of every "{{" a template reads
// (request.go); any other "{{" is sent as it is.
var knownPlaceholders = []string{placeholderSeq, placeholderUUID, placeholderSeqMod, placeholderAnswered,
	placeholderData, placeholderRawData, placeholderJSONData, placeholderRun}

// unknownPlaceholders appends to seen each "{{...}}" in text that no
// placeholder reads (up to its "}}", or 24 bytes when none closes it), once.
func unknownPlaceholders(seen []string, text string) []string {
	for {
		i := strings.Index(text, "{{")
		if i < 0 {
			return seen
		}
		text = text[i:]
		known := false
		for _, p := range knownPlaceholders {
			known = known || strings.HasPrefix(text, p)
		}
		if known {
			text = text[2:]
			continue
		}
		end := strings.Index(text, "}}")
		name := text
		if end >= 0 {
			name = text[:end+2]
		} else if len(name) > 24 {
			name = name[:24]
		}
		if !slices.Contains(seen, name) {
			seen = append(seen, name)
		}
		text = text[2:]
	}
}

// unknownPlaceholderWarning is the run's warning about "{{...}}" no
// placeholder reads in the requests it sends ("" when there is none): they
// are sent as they are (docs/load_tester.md), most likely misspelled.
func (c *Config) unknownPlaceholderWarning() string {
	var seen []string
	texts := []string{c.Path, string(c.Body)}
	texts = append(texts, c.Headers...)
	if w := c.Workload; w != nil {
		texts = texts[2:] // the workload's kinds give the path and the body
		for _, k := range w.Kinds {
			texts = append(append(texts, k.Path, string(k.Body)), k.Headers...)
		}
	}
	for _, t := range texts {
		seen = unknownPlaceholders(seen, t)
	}
	if len(seen) == 0 {
		return ""
	}
	return fmt.Sprintf("unknown placeholder %s sent as it is (known: {{seq}}, {{seq%%N}}, {{uuid}}, {{run}}, {{data.COLUMN}}, {{json:data.COLUMN}}, {{raw:data.COLUMN}}, {{answered:KIND}})",
		strings.Join(seen, ", "))
}
