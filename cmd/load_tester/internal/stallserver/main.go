// Command stallserver is a misbehaving HTTP/1.1 server for trying the load
// tester's accounting by hand (docs/load_tester.md): it answers every
// request normally for --answer-for after the first request it sees, then
// holds every request without answering until it is stopped.
//
//	go run ./cmd/load_tester/internal/stallserver --port 9000 --answer-for 3s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

func main() {
	address := flag.String("address", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 9000, "TCP port")
	answerFor := flag.Duration("answer-for", 3*time.Second, "answer normally for this long after the first request, then hold every request")
	flag.Parse()
	if err := run(*address, *port, *answerFor); err != nil {
		fmt.Fprintf(os.Stderr, "stallserver: %v\n", err)
		os.Exit(1)
	}
}

func run(address string, port int, answerFor time.Duration) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(address, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var once sync.Once
	var holdFrom time.Time
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() {
			holdFrom = time.Now().Add(answerFor)
			fmt.Printf("stallserver: first request; holding every request from %s on\n", holdFrom.Format(time.RFC3339Nano))
		})
		if !time.Now().Before(holdFrom) {
			select { // held: no answer until the server stops or the client gives up
			case <-ctx.Done():
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}`))
	})
	srv := &http.Server{Handler: handler}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	fmt.Printf("stallserver: listening on %s, answering for %v after the first request\n", ln.Addr(), answerFor)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
