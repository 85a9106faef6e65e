package tools

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/tools/sandboxfwd"
)

// EgressRules decide what the sandbox's proxy lets out: the SSRF guard of
// web_fetch (with tools.ssrfWhitelist) for every address a target resolves
// to, and, when set, tools.exec.sandboxAllowDomains for its name.
type EgressRules struct {
	// Guard resolves and checks targets; nil is a guard without a whitelist.
	Guard *SSRFGuard
	// AllowDomains, when not empty, are the only hosts reached: an entry
	// covers itself and its subdomains; an IP address covers itself.
	AllowDomains []string
	// Log receives every refusal; nil is slog.Default().
	Log *slog.Logger
}

// hostAllowed applies the allow list to a requested host.
func (r EgressRules) hostAllowed(host string) bool {
	if len(r.AllowDomains) == 0 {
		return true
	}
	host = normalizeHost(host)
	_, hostErr := netip.ParseAddr(host)
	for _, d := range r.AllowDomains {
		d = normalizeHost(d)
		if _, err := netip.ParseAddr(d); host == d || (err != nil && hostErr != nil && strings.HasSuffix(host, "."+d)) {
			return true // a name covers its subdomains; an address only itself
		}
	}
	return false
}

func normalizeHost(h string) string {
	return strings.ToLower(strings.TrimSuffix(strings.Trim(strings.TrimSpace(h), "[]"), "."))
}

// sandboxProxyHeaderTimeout bounds how long a client inside may take to send a request's head.
const sandboxProxyHeaderTimeout = 30 * time.Second

// SandboxProxy is the sandbox's only way out: an HTTP proxy (CONNECT, and
// plain requests with an absolute http:// URI) on a Unix socket in a private
// folder of this process. It resolves each target itself, so the sandbox needs
// no resolver, and dials only addresses the rules let through.
type SandboxProxy struct {
	rules     EgressRules
	log       *slog.Logger
	dir       string
	socket    string
	forwarder string // this binary, which relays to the socket from inside
	srv       *http.Server
	forward   *httputil.ReverseProxy
	mu        sync.Mutex
	tunnels   map[net.Conn]struct{}
}

// StartSandboxProxy listens on a new socket and serves until Close.
func StartSandboxProxy(rules EgressRules) (*SandboxProxy, error) {
	exe, err := forwarderBinary()
	if err != nil {
		return nil, err
	}
	if rules.Guard == nil {
		if rules.Guard, err = NewSSRFGuard(nil, nil); err != nil {
			return nil, err
		}
	}
	log := rules.Log
	if log == nil {
		log = slog.Default()
	}
	dir, err := os.MkdirTemp("", "nanobot-sandbox-") // 0700: only this user reaches the socket from outside
	if err != nil {
		return nil, fmt.Errorf("sandbox proxy: %w", err)
	}
	socket := filepath.Join(dir, "proxy.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox proxy: %w", err)
	}
	p := &SandboxProxy{rules: rules, log: log, dir: dir, socket: socket, forwarder: exe, tunnels: map[net.Conn]struct{}{}}
	p.forward = &httputil.ReverseProxy{
		Rewrite:      func(*httputil.ProxyRequest) {}, // the absolute URI is the target; hop-by-hop headers go
		Transport:    rules.Guard.transport(),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) { p.failed(w, r.Host, err) },
		ErrorLog:     slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: sandboxProxyHeaderTimeout,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	go func() {
		if err := p.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("sandbox proxy stopped", "error", err)
		}
	}()
	return p, nil
}

// Socket is the proxy's Unix socket on this host.
func (p *SandboxProxy) Socket() string { return p.socket }

// Close stops the proxy, cuts its tunnels and removes its folder.
func (p *SandboxProxy) Close() error {
	err := p.srv.Close()
	p.mu.Lock()
	for c := range p.tunnels {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = os.RemoveAll(p.dir)
	return err
}

func (p *SandboxProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" || r.URL.Host == "" {
		p.refuse(w, r.URL.String(), http.StatusBadRequest, "only CONNECT and absolute http:// requests go through this proxy")
		return
	}
	if !p.rules.hostAllowed(r.URL.Hostname()) {
		p.refuse(w, r.URL.Host, http.StatusForbidden, r.URL.Hostname()+" is not in tools.exec.sandboxAllowDomains")
		return
	}
	p.forward.ServeHTTP(w, r)
}

// connect opens a tunnel to host:port once the rules let it through.
func (p *SandboxProxy) connect(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		p.refuse(w, r.Host, http.StatusBadRequest, "CONNECT needs host:port")
		return
	}
	if !p.rules.hostAllowed(host) {
		p.refuse(w, r.Host, http.StatusForbidden, host+" is not in tools.exec.sandboxAllowDomains")
		return
	}
	upstream, err := p.rules.Guard.DialContext(r.Context(), "tcp", r.Host)
	if err != nil {
		p.failed(w, r.Host, err)
		return
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		_ = upstream.Close()
		p.log.Warn("sandbox proxy: cannot take over the connection", "target", r.Host, "error", err)
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		_ = conn.Close()
		_ = upstream.Close()
		return
	}
	p.track(conn, upstream)
	defer p.untrack(conn, upstream)
	sandboxfwd.Relay(conn, io.MultiReader(rw.Reader, conn), upstream) // what the client sent early is in rw's buffer
}

func (p *SandboxProxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.tunnels[c] = struct{}{}
	}
}

func (p *SandboxProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.tunnels, c)
	}
}

// failed answers a dial that did not happen: 403 when the guard refused the address, 502 otherwise.
func (p *SandboxProxy) failed(w http.ResponseWriter, target string, err error) {
	var blocked *BlockedError
	if errors.As(err, &blocked) {
		p.refuse(w, target, http.StatusForbidden, blocked.Error()+" "+ssrfNonBypassable)
		return
	}
	p.log.Debug("sandbox proxy: target unreachable", "target", target, "error", err)
	answer(w, http.StatusBadGateway, "nanobot sandbox proxy: "+target+" unreachable: "+oneLine(err.Error()))
}

// refuse answers with the reason on one line, which the program inside (curl) shows the model, and logs it.
func (p *SandboxProxy) refuse(w http.ResponseWriter, target string, code int, reason string) {
	p.log.Warn("sandbox proxy refused a request", "target", target, "status", code, "reason", reason)
	answer(w, code, "nanobot sandbox proxy refused "+target+": "+reason)
}

func answer(w http.ResponseWriter, code int, line string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, line+"\n")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// sandboxProxyOnce starts a sandbox's proxy at its first networked command.
type sandboxProxyOnce struct {
	mu     sync.Mutex
	p      *SandboxProxy
	closed bool
}

func (o *sandboxProxyOnce) start(rules EgressRules) (*SandboxProxy, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.p != nil:
		return o.p, nil
	case o.closed:
		return nil, errors.New("the sandbox is closed")
	}
	p, err := StartSandboxProxy(rules) // a failure is tried again at the next command
	if err != nil {
		return nil, err
	}
	o.p = p
	return p, nil
}

func (o *sandboxProxyOnce) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	if o.p == nil {
		return nil
	}
	return o.p.Close()
}

// describe says what the proxy lets through.
func (r EgressRules) describe() string {
	s := "loopback, private and link-local addresses are refused"
	if len(r.AllowDomains) > 0 {
		s += "; only " + strings.Join(r.AllowDomains, ", ") + " (each with its subdomains) can be reached"
	}
	return s
}

// networkNote tells the model what the network inside the sandbox is.
func (s *Sandbox) networkNote() string {
	if !s.Network {
		return "There is no network inside the sandbox."
	}
	return "The network inside is the sandbox's own: outbound HTTP and HTTPS only, through a proxy that HTTP_PROXY, " +
		"HTTPS_PROXY and ALL_PROXY point at (it resolves names itself, so programs that honour those variables, such as " +
		"curl, pip, npm and git over https, work); " + s.Egress.describe() + ". Anything else (raw TCP, UDP, DNS " +
		"lookups) has no route, and localhost is the sandbox's own."
}

// EgressSummary is the sandbox's network in one line, for the banner and status.
func (s *Sandbox) EgressSummary() string {
	if !s.Network {
		return "none (tools.exec.sandboxNetwork is false)"
	}
	return "HTTP(S) only, through the worker's proxy; " + s.Egress.describe()
}

// forwarderBinary is this process's executable, bound into the sandbox as the forwarder.
var forwarderBinary = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("sandbox proxy: cannot find this binary to forward from inside: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe, nil
})
