// Command nethttp_ok is the anchor "what a Go programmer writes first": a
// net/http server whose /ok handler answers {"status":"ok"} as JSON. The
// comparison script (scripts/compare_anchors.sh) measures weaseldb against it.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	flag.Parse()
	http.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}`))
	})
	fmt.Printf("nethttp_ok: listening on %s\n", *addr)
	if err := http.ListenAndServe(*addr, nil); err != nil {
		fmt.Fprintf(os.Stderr, "nethttp_ok: %v\n", err)
		os.Exit(1)
	}
}
