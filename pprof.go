//go:build pprof

// Built only with `go build -tags pprof`: serves net/http/pprof on $PPROF_ADDR (a loopback
// address) for profiling a running server under load (docs/PERFORMANCE.md).
package main

import (
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	if addr := os.Getenv("PPROF_ADDR"); addr != "" {
		go http.ListenAndServe(addr, nil)
	}
}
