package channels

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nanobot-durable/nanobot/internal/hostcheck"
)

// HTTPServer is a channel's HTTP listener (the API, the web chat), served
// in the background from the moment it listens.
type HTTPServer struct {
	srv *http.Server
	ln  net.Listener
}

// Hosts are the Host names a listener answers to beside loopback and its own
// address (hostcheck.New), and the setting that lists them.
type Hosts struct {
	Allowed []string
	Setting string
}

// ListenHTTP listens on addr and serves h in the background to requests
// whose Host names this listener (DNS rebinding: others get 421); name labels
// the log line if serving stops on its own.
func ListenHTTP(addr string, h http.Handler, hosts Hosts, name string, log *slog.Logger) (*HTTPServer, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	guarded := hostcheck.New(host, hosts.Allowed, hosts.Setting).Guard(h)
	s := &HTTPServer{srv: &http.Server{Handler: guarded, ReadHeaderTimeout: 10 * time.Second}, ln: ln}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(name+" stopped", "error", err)
		}
	}()
	return s, nil
}

// Addr is where it listens ("127.0.0.1:18790").
func (s *HTTPServer) Addr() string { return s.ln.Addr().String() }

// Shutdown lets open requests finish until ctx ends, then closes the rest.
func (s *HTTPServer) Shutdown(ctx context.Context) error {
	if s == nil {
		return nil
	}
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
		return err
	}
	return nil
}

// Endpoint is a channel's own HTTP listener (Teams' activities, the API,
// the web chat): where it is to listen and, from Listen to Shutdown, the
// server listening there.
type Endpoint struct {
	name  string // "msteams endpoint": in the log and errors
	addr  string
	hosts Hosts

	mu  sync.Mutex
	srv *HTTPServer
}

// NewEndpoint is an endpoint to listen on host:port, answering to hosts.
func NewEndpoint(name, host string, port int, hosts Hosts) *Endpoint {
	return &Endpoint{name: name, addr: net.JoinHostPort(host, strconv.Itoa(port)), hosts: hosts}
}

// Listen serves h in the background from now on (ListenHTTP).
func (e *Endpoint) Listen(h http.Handler, log *slog.Logger) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	srv, err := ListenHTTP(e.addr, h, e.hosts, e.name, log)
	if err != nil {
		return err
	}
	e.srv = srv
	return nil
}

// Addr is where it listens once it does (port 0 picked), else where it is to.
func (e *Endpoint) Addr() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.srv != nil {
		return e.srv.Addr()
	}
	return e.addr
}

// Shutdown lets open requests finish until ctx ends, then closes the rest;
// an endpoint that never listened has nothing to stop.
func (e *Endpoint) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	srv := e.srv
	e.mu.Unlock()
	if err := srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("stop the %s: %w", e.name, err)
	}
	return nil
}

// ReadJSON decodes a request's JSON body into v: at most limit bytes of
// it, a larger one refused (http.MaxBytesError).
func ReadJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}

// SharedHTTP is a listener other parts of the process serve on: the
// gateway's /health and /ready and, when it is given the same host:port
// (both default to 18790), the web chat.
type SharedHTTP struct {
	*HTTPServer
	mounted atomic.Pointer[http.Handler]
}

// ListenShared serves routes on addr; a request none of them takes goes to
// the handler mounted, 404 while there is none. hosts guards all of it.
func ListenShared(addr string, routes *http.ServeMux, hosts Hosts, name string, log *slog.Logger) (*SharedHTTP, error) {
	s := &SharedHTTP{}
	routes.HandleFunc("/", s.serveMounted)
	srv, err := ListenHTTP(addr, routes, hosts, name, log)
	if err != nil {
		return nil, err
	}
	s.HTTPServer = srv
	return s, nil
}

// Mount serves h for every path the listener's own routes leave; nil unmounts.
func (s *SharedHTTP) Mount(h http.Handler) { s.mounted.Store(&h) }

func (s *SharedHTTP) serveMounted(w http.ResponseWriter, r *http.Request) {
	if h := s.mounted.Load(); h != nil && *h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	http.NotFound(w, r)
}
