// Package hostcheck answers 421 Misdirected Request to a request whose Host
// names none of the names its listener serves, so a web page whose DNS name
// was rebound to this machine cannot read or drive it (DNS rebinding).
// cmd/temporal-dev keeps a copy (hostcheck.go): a nested module cannot import this one.
package hostcheck

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// Hosts are the Host names one listener answers to.
type Hosts struct {
	bound    net.IP          // the listen IP when it is a specific one
	wildcard bool            // bound to every address: any IP literal names it
	names    map[string]bool // lower-case, without port or brackets
	setting  string          // where a user adds a name, for the refusal
}

// New is what a listener on listenHost serves: 127.0.0.1, [::1], localhost,
// the bound IP (any IP literal when bound to every address: a rebinding page
// always uses a DNS name) and the names allowed, which setting configures.
func New(listenHost string, allowed []string, setting string) *Hosts {
	h := &Hosts{names: map[string]bool{"localhost": true}, setting: setting}
	if ip := net.ParseIP(Name(listenHost)); ip != nil {
		h.bound, h.wildcard = ip, ip.IsUnspecified()
	} else if n := Name(listenHost); n != "" {
		h.names[n] = true // bound by name: that name is one it answers to
	}
	for _, n := range allowed {
		if n = Name(n); n != "" {
			h.names[n] = true
		}
	}
	return h
}

// Name is host without port, brackets or trailing dot, lower-case.
func Name(host string) string {
	host = strings.TrimSpace(host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// Allows reports whether a request's Host names this listener. A request
// without Host is let through: browsers always send one, old probes may not.
func (h *Hosts) Allows(host string) bool {
	name := Name(host)
	if name == "" || h.names[name] {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && (ip.IsLoopback() || h.wildcard || ip.Equal(h.bound))
}

// Guard serves next only to requests whose Host this listener answers to.
func (h *Hosts) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.Allows(r.Host) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusMisdirectedRequest)
		_, _ = fmt.Fprintf(w, "host %q is not served here (DNS rebinding guard): use 127.0.0.1 or localhost, or add the name to %s\n", Name(r.Host), h.setting)
	})
}

// Loopback reports a host only this machine reaches: a loopback IP or localhost.
func Loopback(host string) bool {
	name := Name(host)
	if name == "localhost" {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// Matches reports whether host is one of patterns: a name itself, or
// "*.example.com" for any name under example.com (not example.com itself).
func Matches(host string, patterns []string) bool {
	host = Name(host)
	for _, p := range patterns {
		p = Name(p)
		if suffix, wild := strings.CutPrefix(p, "*"); wild && strings.HasPrefix(suffix, ".") && strings.HasSuffix(host, suffix) || p == host {
			return host != ""
		}
	}
	return false
}
