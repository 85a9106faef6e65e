package testenv

import (
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// ServeHTTP serves h on addr ("127.0.0.5:0") until the test ends and returns where it listens.
func ServeHTTP(t testing.TB, addr string, h http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// CountAccepts listens on addr until the test ends and counts the
// connections that reach it: a port nothing may reach (from a sandbox).
func CountAccepts(t testing.TB, addr string) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			_ = c.Close()
		}
	}()
	return ln.Addr().String(), &n
}
