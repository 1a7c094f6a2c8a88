package reports

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writePNG writes a small PNG at dir/name.
func writePNG(t *testing.T, dir, name string) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMarkdownHTML(t *testing.T) {
	dir := t.TempDir()
	writePNG(t, dir, "img/a.png")
	const md = "# The report\n\n## Section\n\n| a | b |\n|---|---|\n| 1 | 2<sup>[3]</sup> |\n\n![Throughput & \"latency\"](img/a.png)\n"
	tests := []struct {
		name, md string
		want     []string
		err      string
	}{
		{"report", md, []string{"<title>The report</title>", `<h2 id="section">Section</h2>`, "<table>", "<td>2<sup>[3]</sup></td>",
			`<img src="data:image/png;base64,iVBOR`, `alt="Throughput &amp; &#34;latency&#34;"`, "(plot <code>img/a.png</code>)"}, ""},
		{"missing image", "# R\n\n![gone](img/gone.png)\n", nil, "image img/gone.png"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page, err := MarkdownHTML([]byte(tc.md), dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !bytes.Contains(page, []byte(w)) {
					t.Errorf("page lacks %q", w)
				}
			}
			if bytes.Contains(page, []byte(`src="img/`)) || bytes.Contains(page, []byte("<script")) {
				t.Error("page refers to a file or runs a script: it must stand alone")
			}
		})
	}
}

func TestHTMLPath(t *testing.T) {
	for in, want := range map[string]string{"reports/r.md": "reports/r.html", "x": "x.html", "a.b/c.md": "a.b/c.html"} {
		if got := HTMLPath(in); got != want {
			t.Errorf("HTMLPath(%q) = %q, want %q", in, got, want)
		}
	}
}
