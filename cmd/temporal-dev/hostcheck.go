package main

// A copy of the root module's internal/hostcheck: this nested module cannot import it.

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
)

// allowedHosts are the Host names one listener answers to, so that a page
// whose DNS name was rebound to this machine cannot read it (DNS rebinding).
type allowedHosts struct {
	bound    net.IP          // the listen IP when it is a specific one
	wildcard bool            // bound to every address: any IP literal names it
	names    map[string]bool // lower-case, without port or brackets
	setting  string          // where a user adds a name, for the refusal
}

// newAllowedHosts is what a listener on listenIP serves: 127.0.0.1, [::1],
// localhost, the bound IP (any IP when bound to every address) and extra.
func newAllowedHosts(listenIP string, extra []string, setting string) *allowedHosts {
	h := &allowedHosts{names: map[string]bool{"localhost": true}, setting: setting}
	if ip := net.ParseIP(hostName(listenIP)); ip != nil {
		h.bound, h.wildcard = ip, ip.IsUnspecified()
	}
	for _, n := range extra {
		if n = hostName(n); n != "" {
			h.names[n] = true
		}
	}
	return h
}

// hostName is host without port, brackets or trailing dot, lower-case.
func hostName(host string) string {
	host = strings.TrimSpace(host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// allows reports whether a request's Host names this listener. A request
// without Host is let through: browsers always send one.
func (h *allowedHosts) allows(host string) bool {
	name := hostName(host)
	if name == "" || h.names[name] {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && (ip.IsLoopback() || h.wildcard || ip.Equal(h.bound))
}

// guard answers 421 Misdirected Request to a Host this listener does not serve.
func (h *allowedHosts) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.allows(r.Host) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusMisdirectedRequest)
		_, _ = fmt.Fprintf(w, "host %q is not served here (DNS rebinding guard): use 127.0.0.1 or localhost, or allow the name with %s\n", hostName(r.Host), h.setting)
	})
}

// patterns are the same names as frontend.httpAllowedHosts wildcards, which match Host with
// its port: a wildcard bind lists this machine's addresses, since a pattern cannot say "any IP".
func (h *allowedHosts) patterns() []string {
	names := []string{}
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	for n := range h.names {
		if ip := net.ParseIP(n); ip != nil {
			ips = append(ips, ip)
		} else {
			names = append(names, n)
		}
	}
	switch {
	case h.wildcard:
		addrs, _ := net.InterfaceAddrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				ips = append(ips, ipn.IP)
			}
		}
	case h.bound != nil:
		ips = append(ips, h.bound)
	}
	for _, ip := range ips {
		if ip.To4() == nil {
			names = append(names, "["+ip.String()+"]")
		} else {
			names = append(names, ip.String())
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out := make([]string, 0, 2*len(names))
	for _, n := range names {
		out = append(out, n, n+":*")
	}
	return out
}

// httpAllowedHosts are the Host patterns the frontend's HTTP API (--http-port) answers to.
func httpAllowedHosts(o *options) []string {
	return newAllowedHosts(o.IP, o.UIAllowedHosts, "--ui-allowed-host").patterns()
}
