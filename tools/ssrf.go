package tools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Resolver looks up a host's addresses; *net.Resolver satisfies it, and
// tests inject fakes whose answers change between calls.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// ssrfNonBypassable ends every SSRF refusal, as in nanobot, so the model
// stops looking for another way to the same address.
const ssrfNonBypassable = "(this restriction is non-bypassable)"

// BlockedError is a refusal by the SSRF guard.
type BlockedError struct {
	Host string     // the host as requested (may be the IP itself)
	IP   netip.Addr // the address that was refused
	Kind string     // e.g. "private", "loopback", "link-local"
}

func (e *BlockedError) Error() string {
	ip := e.IP.String()
	host := strings.Trim(e.Host, "[]")
	if literal, err := netip.ParseAddr(host); err == nil {
		if literal.WithZone("").String() != ip {
			return fmt.Sprintf("%s (%s) is a %s address", host, ip, e.Kind)
		}
		host = ""
	}
	if host != "" && host != ip {
		return fmt.Sprintf("%s resolves to %s, a %s address", host, ip, e.Kind)
	}
	return fmt.Sprintf("%s is a %s address", ip, e.Kind)
}

// ssrfResult is the tool result for a refusal.
func ssrfResult(e *BlockedError) Result {
	return ErrorResult("Error: URL blocked by SSRF guard: %s %s", e.Error(), ssrfNonBypassable)
}

type blockedRange struct {
	prefix netip.Prefix
	kind   string
}

// blockedRanges are nanobot's SSRF ranges plus multicast and reserved space.
var blockedRanges = []blockedRange{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("fc00::/7"), "unique local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
}

// IPv6 prefixes that embed an IPv4 address in their last 32 bits; the
// embedded address is what the packet reaches, so it is what gets checked.
var (
	nat64Prefix      = netip.MustParsePrefix("64:ff9b::/96")
	sixToFourPrefix  = netip.MustParsePrefix("2002::/16") // 6to4: the IPv4 address is bits 16-48
	v4CompatPrefix   = netip.MustParsePrefix("::/96")
	ipv6Loopback     = netip.IPv6Loopback()
	errNoAddresses   = errors.New("no addresses")
	ssrfDialTimeout  = 10 * time.Second
	ssrfTLSHandshake = 10 * time.Second
)

// classifyIP returns why ip is blocked, or "" when it is a public address.
// IPv6-mapped (::ffff:a.b.c.d), NAT64 and IPv4-compatible forms are judged
// by the IPv4 address they carry.
func classifyIP(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	if ip.Is6() && (nat64Prefix.Contains(ip) || (v4CompatPrefix.Contains(ip) && ip.Compare(ipv6Loopback) > 0)) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	if sixToFourPrefix.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	for _, r := range blockedRanges {
		if r.prefix.Contains(ip) {
			return r.kind
		}
	}
	return ""
}

// SSRFGuard keeps outgoing web requests off private, loopback, link-local
// and other internal addresses. It resolves a host once, checks every
// address, and connects to the checked address itself, so a DNS answer
// that changes between check and connect (rebinding) cannot slip through.
type SSRFGuard struct {
	resolver  Resolver
	whitelist []netip.Prefix
}

// NewSSRFGuard builds a guard; whitelist holds CIDRs or bare IPs
// (tools.ssrfWhitelist) that are reachable even inside blocked ranges.
// A nil resolver uses net.DefaultResolver.
func NewSSRFGuard(whitelist []string, resolver Resolver) (*SSRFGuard, error) {
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	g := &SSRFGuard{resolver: resolver}
	for _, w := range whitelist {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		p, err := netip.ParsePrefix(w)
		if err != nil {
			ip, ipErr := netip.ParseAddr(w)
			if ipErr != nil {
				return nil, fmt.Errorf("tools.ssrfWhitelist: %q is not a CIDR or IP address", w)
			}
			p = netip.PrefixFrom(ip, ip.BitLen())
		}
		g.whitelist = append(g.whitelist, p.Masked())
	}
	return g, nil
}

// CheckIP returns a *BlockedError when ip may not be contacted.
func (g *SSRFGuard) CheckIP(host string, ip netip.Addr) error {
	ip = ip.WithZone("")
	for _, p := range g.whitelist {
		if p.Contains(ip) || p.Contains(ip.Unmap()) {
			return nil
		}
	}
	if kind := classifyIP(ip); kind != "" {
		return &BlockedError{Host: host, IP: ip.Unmap(), Kind: kind}
	}
	return nil
}

// CheckURL validates scheme and host and checks every address the host
// resolves to. Resolution failures are plain errors, refusals *BlockedError.
func (g *SSRFGuard) CheckURL(ctx context.Context, raw string) error {
	host, err := checkURLShape(raw)
	if err != nil {
		return err
	}
	ips, err := g.resolve(ctx, host)
	if err != nil {
		return err
	}
	for _, ip := range ips {
		if err := g.CheckIP(host, ip); err != nil {
			return err
		}
	}
	return nil
}

// checkURLShape accepts only http(s) URLs with a host and returns the host.
func checkURLShape(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("invalid URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		scheme := u.Scheme
		if scheme == "" {
			scheme = "none"
		}
		return "", fmt.Errorf("only http/https URLs are allowed, got '%s'", scheme)
	}
	if u.Hostname() == "" {
		return "", errors.New("URL has no host")
	}
	return u.Hostname(), nil
}

// resolve returns host's addresses; an IP literal is returned as is without
// asking the resolver.
func (g *SSRFGuard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.Trim(host, "[]")
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	addrs, err := g.resolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve %s: %w", host, err)
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			out = append(out, ip.Unmap().WithZone(a.Zone))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("cannot resolve %s: %w", host, errNoAddresses)
	}
	return out, nil
}

// DialContext is an http.Transport dialer: it resolves addr's host once,
// refuses the connection if any address is blocked, and dials the checked
// addresses only. The socket-level Control hook re-checks the address
// actually connected to, so nothing reaches a blocked IP by another path.
func (g *SSRFGuard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := net.LookupPort(network, portStr)
	if err != nil {
		return nil, err
	}
	ips, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	for _, ip := range ips {
		if err := g.CheckIP(host, ip); err != nil {
			return nil, err
		}
	}
	d := &net.Dialer{Timeout: ssrfDialTimeout, Control: g.controlHook(host)}
	var lastErr error
	for _, ip := range ips {
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

// controlHook checks the raw socket address just before connect.
func (g *SSRFGuard) controlHook(host string) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("SSRF guard: unexpected dial address %q", address)
		}
		return g.CheckIP(host, ap.Addr())
	}
}

// redirectLimitError is returned once a fetch exceeds its redirect budget.
type redirectLimitError struct{ max int }

func (e *redirectLimitError) Error() string {
	return fmt.Sprintf("Too many redirects: exceeded limit of %d", e.max)
}

// HTTPClient returns a client whose requests the guard checks, with
// redirects re-validated hop by hop. Without a proxy every connection goes
// through the guard's dialer, which connects to the checked address itself;
// the environment's proxies are deliberately not used, since a proxy would
// connect on our behalf to addresses the guard never saw. With
// tools.web.proxy (the user's choice) each hop's host is resolved and
// checked before the request goes to the proxy, as nanobot does; the proxy
// resolves it again, so the rebinding defence is the proxy's to keep.
func (g *SSRFGuard) HTTPClient(timeout time.Duration, maxRedirects int, proxy *url.URL) *http.Client {
	tr := g.transport()
	var rt http.RoundTripper = tr
	if proxy != nil {
		tr.Proxy = http.ProxyURL(proxy)
		tr.DialContext = (&net.Dialer{Timeout: ssrfDialTimeout}).DialContext
		rt = checkedTransport{guard: g, next: tr}
	}
	return &http.Client{
		Transport: rt,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return &redirectLimitError{max: maxRedirects}
			}
			if _, err := checkURLShape(req.URL.String()); err != nil {
				return fmt.Errorf("redirect to %s refused: %w", req.URL.Redacted(), err)
			}
			// IP literals are refused before any connection; host names are
			// resolved and checked by DialContext when the hop connects.
			if ip, err := netip.ParseAddr(strings.Trim(req.URL.Hostname(), "[]")); err == nil {
				return g.CheckIP(req.URL.Hostname(), ip)
			}
			return nil
		},
	}
}

// transport connects through the guard's dialer only, never through the environment's proxies.
func (g *SSRFGuard) transport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   ssrfTLSHandshake,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// checkedTransport checks every request's host with the guard before it
// leaves for the proxy.
type checkedTransport struct {
	guard *SSRFGuard
	next  *http.Transport
}

func (c checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := c.guard.CheckURL(req.Context(), req.URL.String()); err != nil {
		return nil, err
	}
	return c.next.RoundTrip(req)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the transport.
func (c checkedTransport) CloseIdleConnections() { c.next.CloseIdleConnections() }
