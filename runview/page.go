package runview

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"weaseldb/loadtester/result"
)

//go:embed page.html.tmpl
var pageTemplate string

var pageTmpl = template.Must(template.New("page").Parse(pageTemplate))

// Page is one HTML view, ready to write.
type Page struct {
	Title   string
	Kind    string   // "run", "merged run", "rate steps" or "knee search"
	Sources []string // the files it was made from, as given
	Run     *runView
	Steps   *stepsView
	Compare *compareView
}

// ResultPage is the page of a single or merged run; sources name the
// files it came from (none: a run that has just ended).
func ResultPage(res *result.Result, sources []string) (*Page, error) {
	v, err := newRunView("", res)
	if err != nil {
		return nil, err
	}
	kind := "run"
	if len(res.Instances) > 0 {
		kind = "merged run"
	}
	return &Page{Title: fmt.Sprintf("load_tester %s: %s", kind, res.Target), Kind: kind, Sources: sources, Run: v}, nil
}

// StepsPage is the page of a rate-steps run or a knee search.
func StepsPage(sr *result.StepsResult, sources []string) (*Page, error) {
	v, err := newStepsView(sr)
	if err != nil {
		return nil, err
	}
	kind := "rate steps"
	if sr.Search != nil {
		kind = "knee search"
	}
	return &Page{Title: fmt.Sprintf("load_tester %s: %s", kind, sr.Target), Kind: kind, Sources: sources, Steps: v}, nil
}

// Write writes the page.
func (p *Page) Write(w io.Writer) error {
	if err := pageTmpl.Execute(w, p); err != nil {
		return fmt.Errorf("html page: %w", err)
	}
	return nil
}

// SetCommand names the command line that ran the result, where the result
// does not record one (a run's --html knows it; a file read back does not).
func (p *Page) SetCommand(cmd string) {
	if p.Run != nil && p.Run.Command == "" {
		p.Run.Command = cmd
	}
	if p.Steps != nil && p.Steps.Command == "" {
		p.Steps.Command = cmd
	}
}
