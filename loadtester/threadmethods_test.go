package loadtester

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxThreadMethods bounds netThread's own methods: issue 56's 30 (the
// loop, the connections and their life, and what the protocols report).
// The load modes and the protocols moved out took it from 61 to 50; the
// accounting (accounts.go), the epoll engine's own work (engine_epoll.go)
// and the transports' choice (protocol.go) to this. It may only go down.
const maxThreadMethods = 30

// netThread keeps the loop, its connections and their life: what a load
// mode, a protocol, a transport, an engine or the accounting does lives in
// a type of its own (mode.go, protocol.go, engine.go, accounts.go), so the
// thread's own methods do not grow back.
func TestNetThreadMethodsStayFew(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var names []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok && id.Name == "netThread" {
				names = append(names, fn.Name.Name)
			}
		}
	}
	if len(names) > maxThreadMethods {
		t.Errorf("netThread has %d methods, at most %d wanted: %v", len(names), maxThreadMethods, names)
	}
}
