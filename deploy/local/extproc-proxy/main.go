package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	epp := flag.String("epp", "127.0.0.1:19002", "the EPP's ext_proc gRPC address (plaintext)")
	listen := flag.String("listen", "127.0.0.1:18080", "HTTP address to serve")
	verbose := flag.Bool("v", false, "log every ext_proc frame")
	pickTimeout := flag.Duration("pick-timeout", 10*time.Second, "longest wait for the EPP's destination")
	maxBody := flag.Int64("max-body", 16<<20, "request body limit in bytes (413 above it)")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	if err := run(*epp, *listen, *verbose, *pickTimeout, *maxBody); err != nil {
		fmt.Fprintln(os.Stderr, "kiln-extproc-proxy:", err)
		os.Exit(1)
	}
}

// run serves until SIGINT or SIGTERM, then lets requests under way finish
// for up to 10 s.
func run(epp, listen string, verbose bool, pickTimeout time.Duration, maxBody int64) error {
	if pickTimeout <= 0 || maxBody <= 0 {
		return errors.New("-pick-timeout and -max-body must be positive")
	}
	cc, err := grpc.NewClient(epp, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("-epp %s: %w", epp, err)
	}
	defer cc.Close()
	p := &Proxy{
		EPP:         extproc.NewExternalProcessorClient(cc),
		Upstream:    NewTransport(),
		PickTimeout: pickTimeout,
		MaxBody:     maxBody,
		Verbose:     verbose,
		Logf:        log.Printf,
	}
	// No ReadTimeout or WriteTimeout: responses stream for as long as
	// generation takes, and a read deadline would cancel the request's
	// context mid-stream.
	srv := &http.Server{Addr: listen, Handler: p, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Printf("kiln-extproc-proxy: listening on %s, EPP at %s", listen, epp)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
