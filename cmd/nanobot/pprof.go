package main

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

// startPprof serves net/http/pprof on NANOBOT_PPROF (a loopback address such
// as 127.0.0.1:6060) for profiling a worker; off when unset.
func startPprof(log *slog.Logger) {
	addr := os.Getenv("NANOBOT_PPROF")
	if addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		log.Warn("NANOBOT_PPROF must be a loopback host:port; profiling stays off", "addr", addr)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Warn("pprof listener failed", "addr", addr, "error", err)
		return
	}
	go func() {
		if err := http.Serve(ln, mux); err != nil && !errors.Is(err, net.ErrClosed) {
			log.Warn("pprof server stopped", "error", err)
		}
	}()
}
