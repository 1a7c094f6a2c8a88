// Command fasthttp_ok answers GET /ok as weaseldb does (200, JSON content
// type, {"status":"ok"}) with a fasthttp.Server, which reads pipelined
// requests and flushes their answers together. Server and Date headers are
// off, so the response is the size of weaseldb's.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/valyala/fasthttp"
)

var body = []byte(`{"status":"ok"}`)

func handle(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) != "/ok" {
		ctx.SetStatusCode(fasthttp.StatusNotFound)
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8083", "listen address")
	flag.Parse()
	srv := &fasthttp.Server{Handler: handle, NoDefaultServerHeader: true, NoDefaultDate: true, NoDefaultContentType: true}
	fmt.Printf("fasthttp_ok: listening on %s\n", *addr)
	if err := srv.ListenAndServe(*addr); err != nil {
		fmt.Fprintf(os.Stderr, "fasthttp_ok: %v\n", err)
		os.Exit(1)
	}
}
