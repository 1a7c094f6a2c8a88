package render

import (
	"strings"
	"testing"
)

func TestEscapeMarkdown(t *testing.T) {
	got := escapeMarkdown("a|b <script> *x* _y_ `z` [l](u)\nnext")
	if strings.ContainsAny(strings.NewReplacer(`\|`, "", `\*`, "", `\_`, "", "\\`", "", `\[`, "", `\]`, "").Replace(got), "|*_`[]<>\n") {
		t.Errorf("unescaped markup left: %q", got)
	}
}
