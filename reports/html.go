package reports

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	ghtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// The report's HTML twin (report --html): the markdown the generator
// wrote, rendered by goldmark (GitHub's tables), each plot inlined as a
// data: URI so that the one file is the whole report, and captioned with
// the file it was drawn to, as the markdown names it. Rendering the
// markdown, rather than writing HTML beside it, keeps the two the same
// sections and numbers by construction.

// HTMLPath is the twin's path beside a markdown report: report.md gives
// report.html.
func HTMLPath(mdPath string) string {
	return strings.TrimSuffix(mdPath, filepath.Ext(mdPath)) + ".html"
}

// WriteHTML renders the markdown report at mdPath to htmlPath, reading
// its images relative to mdPath's directory.
func WriteHTML(mdPath, htmlPath string) error {
	md, err := os.ReadFile(mdPath)
	if err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	page, err := MarkdownHTML(md, filepath.Dir(mdPath))
	if err != nil {
		return fmt.Errorf("html report of %s: %w", mdPath, err)
	}
	if err := os.WriteFile(htmlPath, page, 0o644); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

// MarkdownHTML renders a markdown report as one self-contained HTML page,
// its images read from dir. An image that cannot be read is an error: a
// twin without a plot is not the same report.
func MarkdownHTML(md []byte, dir string) ([]byte, error) {
	ir := &inlineImages{dir: dir}
	gm := goldmark.New(goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(parser.WithAutoHeadingID()), // the report's links to its own sections
		goldmark.WithRendererOptions(ghtml.WithUnsafe(), // the report's own <sup> citations
			renderer.WithNodeRenderers(util.Prioritized(ir, 100))))
	var body bytes.Buffer
	if err := gm.Convert(md, &body); err != nil {
		return nil, err
	}
	if ir.err != nil {
		return nil, ir.err
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, htmlHead, html.EscapeString(reportTitle(md)))
	out.Write(body.Bytes())
	out.WriteString("</body>\n</html>\n")
	return out.Bytes(), nil
}

// reportTitle is the markdown's first level-1 heading.
func reportTitle(md []byte) string {
	for _, line := range strings.Split(string(md), "\n") {
		if t, ok := strings.CutPrefix(line, "# "); ok {
			return strings.TrimSpace(t)
		}
	}
	return "report"
}

// inlineImages renders each image as its bytes in a data: URI, captioned
// with its alt text and the file it came from.
type inlineImages struct {
	dir string
	err error // the first image that could not be read
}

func (r *inlineImages) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindImage, r.render)
}

func (r *inlineImages) render(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	dest := string(n.Destination)
	alt := altText(n, source)
	data, err := os.ReadFile(filepath.Join(r.dir, filepath.FromSlash(dest)))
	if err != nil {
		if r.err == nil {
			r.err = fmt.Errorf("image %s: %w", dest, err)
		}
		return ast.WalkSkipChildren, nil
	}
	fmt.Fprintf(w, `<span class="figure"><img src="data:%s;base64,%s" alt="%s" data-file="%s"><br><span class="caption">%s (plot <code>%s</code>)</span></span>`,
		mimeOf(dest), base64.StdEncoding.EncodeToString(data), html.EscapeString(alt), html.EscapeString(dest),
		html.EscapeString(alt), html.EscapeString(dest))
	return ast.WalkSkipChildren, nil
}

// altText is an image's alt text, as written.
func altText(n ast.Node, source []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			b.Write(t.Segment.Value(source))
		} else {
			b.WriteString(altText(c, source))
		}
	}
	return b.String()
}

func mimeOf(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return "image/svg+xml"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	}
	return "image/png"
}

// htmlHead opens the page: its title, and a style for tables and plots
// written inline (no stylesheet to fetch).
const htmlHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; margin: 1.5em auto; max-width: 1100px; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: .6em 0; display: block; overflow-x: auto; }
td, th { border: 1px solid #ddd; padding: 3px 8px; } th { background: #f4f4f4; }
code { background: #f4f4f4; padding: 0 3px; } pre { background: #f6f6f6; padding: 8px; overflow-x: auto; }
blockquote { border-left: 4px solid #f0a020; margin: 0; padding: 2px 10px; background: #fff8ec; }
.figure img { max-width: 100%%; height: auto; border: 1px solid #e4e4e4; }
.caption { font-size: 13px; color: #555; }
</style>
</head>
<body>
`
