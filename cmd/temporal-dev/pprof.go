package main

import (
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

// startPprof serves net/http/pprof on TEMPORAL_DEV_PPROF (a loopback
// host:port), to profile the server under the benchmarks; off when unset.
func startPprof() {
	addr := os.Getenv("TEMPORAL_DEV_PPROF")
	if addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return
	}
	go func() { _ = http.Serve(ln, mux) }()
}
