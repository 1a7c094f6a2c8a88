package loadtester

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// protocolFiles are the files of the protocols and transports behind the
// seam (protocol.go): TLS, HTTP/2, HTTP/1.1 and the plain socket.
func protocolFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"tls*.go", "h2*.go", "http1*.go", "socket*.go"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, f)
			}
		}
	}
	if len(files) < 7 {
		t.Fatalf("found %d protocol files (%v): the globs went stale", len(files), files)
	}
	return files
}

// The contract of the protocol seam: a protocol reports to its thread
// and asks it for requests through the seam's interfaces (connEvents,
// requestSource) and never names the thread, so it can neither call the
// thread's methods nor read its fields; nor does it reach a thread
// through the runner's list of them.
func TestProtocolsDoNotReachIntoTheThread(t *testing.T) {
	fset := token.NewFileSet()
	for _, name := range protocolFiles(t) {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident:
				if n.Name == "netThread" {
					t.Errorf("%s: names netThread: a protocol reaches its thread through connEvents and requestSource only", fset.Position(n.Pos()))
				}
			case *ast.SelectorExpr:
				if n.Sel.Name == "threads" {
					t.Errorf("%s: reads a runner's threads", fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
}

// The HTTP/1.1 parser is the HTTP/1.1 protocol's alone: outside its own
// file and the protocol's, no production file names it.
func TestHTTP1ParserStaysInItsProtocol(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "response.go" || name == "http1.go" {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Name == "respParser" {
				t.Errorf("%s: names respParser outside the HTTP/1.1 protocol", fset.Position(id.Pos()))
			}
			return true
		})
	}
}
