package tools

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeResolver answers from a fixed table and fails for unknown hosts.
type fakeResolver map[string][]string

func (f fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ips, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return toIPAddrs(ips), nil
}

// seqResolver gives the i-th answer on the i-th call (the last one after
// that): a DNS server rebinding its answer between lookups.
type seqResolver struct {
	mu      sync.Mutex
	answers [][]string
	calls   int
}

func (s *seqResolver) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.answers[min(s.calls, len(s.answers)-1)]
	s.calls++
	return toIPAddrs(a), nil
}

func (s *seqResolver) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func toIPAddrs(ips []string) []net.IPAddr {
	out := make([]net.IPAddr, len(ips))
	for i, s := range ips {
		out[i] = net.IPAddr{IP: net.ParseIP(s)}
	}
	return out
}

func TestSSRFClassify(t *testing.T) {
	blocked := map[string]string{
		"0.0.0.0": "unspecified", "0.1.2.3": "unspecified",
		"10.0.0.1": "private", "10.255.255.255": "private",
		"100.64.0.1": "carrier-grade NAT", "100.127.255.255": "carrier-grade NAT",
		"127.0.0.1": "loopback", "127.255.255.254": "loopback",
		"169.254.169.254": "link-local", "169.254.0.1": "link-local",
		"172.16.0.1": "private", "172.31.255.255": "private",
		"192.168.0.1": "private", "192.168.255.255": "private",
		"224.0.0.1": "multicast", "239.255.255.250": "multicast",
		"240.0.0.1": "reserved", "255.255.255.255": "reserved",
		"::": "unspecified", "::1": "loopback",
		"fc00::1": "unique local", "fd12:3456::1": "unique local",
		"fe80::1": "link-local", "fe80::1%eth0": "link-local", "febf::1": "link-local",
		"ff02::1": "multicast",
		// IPv6 forms carrying an IPv4 address are judged by that address.
		"::ffff:127.0.0.1": "loopback", "::ffff:10.0.0.1": "private", "::ffff:169.254.169.254": "link-local",
		"::ffff:192.168.1.1": "private", "::ffff:0.0.0.0": "unspecified",
		"64:ff9b::a00:1": "private", "::127.0.0.1": "loopback",
	}
	for s, kind := range blocked {
		require.Equal(t, kind, classifyIP(netip.MustParseAddr(s)), s)
	}
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "11.0.0.1", "100.63.255.255", "100.128.0.1", "126.255.255.255",
		"128.0.0.1", "169.253.255.255", "172.15.255.255", "172.32.0.1", "192.167.255.255", "192.169.0.1",
		"223.255.255.255", "2606:4700::1111", "2001:db8::1", "::ffff:8.8.8.8", "64:ff9b::808:808", "fec0::1"} {
		require.Empty(t, classifyIP(netip.MustParseAddr(s)), s)
	}
}

func TestSSRFWhitelist(t *testing.T) {
	g, err := NewSSRFGuard([]string{"127.0.0.1/32", "10.0.0.0/8", "fd00::1", " "}, nil)
	require.NoError(t, err)
	for s, ok := range map[string]bool{
		"127.0.0.1": true, "::ffff:127.0.0.1": true, "127.0.0.2": false,
		"10.9.9.9": true, "::ffff:10.1.1.1": true, "172.16.0.1": false,
		"fd00::1": true, "fd00::2": false, "8.8.8.8": true,
	} {
		err := g.CheckIP(s, netip.MustParseAddr(s))
		require.Equal(t, ok, err == nil, "%s: %v", s, err)
	}
	_, err = NewSSRFGuard([]string{"not-a-cidr"}, nil)
	require.ErrorContains(t, err, "not a CIDR or IP")
}

func TestSSRFCheckURL(t *testing.T) {
	g, err := NewSSRFGuard(nil, fakeResolver{"internal.test": {"8.8.8.8", "192.168.0.5"}, "public.test": {"8.8.4.4"}})
	require.NoError(t, err)
	ctx := context.Background()
	for _, tc := range []struct {
		url, msg string
		blocked  bool
	}{
		{url: "http://10.0.0.1/x", msg: "10.0.0.1 is a private address", blocked: true},
		{url: "http://[::ffff:7f00:1]:8080/", msg: "::ffff:7f00:1 (127.0.0.1) is a loopback address", blocked: true},
		{url: "https://internal.test/a", msg: "internal.test resolves to 192.168.0.5, a private address", blocked: true},
		{url: "https://public.test/a"},
		{url: "ftp://public.test/", msg: "only http/https URLs are allowed, got 'ftp'"},
		{url: "file:///etc/passwd", msg: "only http/https URLs are allowed, got 'file'"},
		{url: "http:///nohost", msg: "URL has no host"},
		{url: "http://nxdomain.test/", msg: "cannot resolve nxdomain.test"},
	} {
		err := g.CheckURL(ctx, tc.url)
		var b *BlockedError
		require.Equal(t, tc.blocked, errors.As(err, &b), "%s: %v", tc.url, err)
		if tc.msg == "" {
			require.NoError(t, err, tc.url)
		} else {
			require.ErrorContains(t, err, tc.msg, tc.url)
		}
	}
}

// countingServer starts an HTTP server on 127.0.0.1 counting requests.
func countingServer(t *testing.T) (*httptest.Server, *int, *sync.Mutex) {
	t.Helper()
	var mu sync.Mutex
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("hello from " + r.Host))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits, &mu
}

func TestSSRFDialResolvesOnceAndDialsTheCheckedIP(t *testing.T) {
	srv, _, _ := countingServer(t)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	res := &seqResolver{answers: [][]string{{"127.0.0.1"}, {"10.0.0.1"}}}
	g, err := NewSSRFGuard([]string{"127.0.0.1/32"}, res)
	require.NoError(t, err)
	ctx := context.Background()
	addr := net.JoinHostPort("rebind.test", strconv.Itoa(port))

	conn, err := g.DialContext(ctx, "tcp", addr)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1", conn.RemoteAddr().(*net.TCPAddr).IP.String(), "the checked address is the one dialled")
	require.NoError(t, conn.Close())
	require.Equal(t, 1, res.count(), "one lookup per connection: nothing to rebind between check and connect")

	// The next connection sees the rebound answer and is refused before dialling.
	_, err = g.DialContext(ctx, "tcp", addr)
	var b *BlockedError
	require.ErrorAs(t, err, &b)
	require.Equal(t, "10.0.0.1", b.IP.String())
	require.Equal(t, 2, res.count())
}

func TestSSRFDialRefusesIfAnyAddressIsBlocked(t *testing.T) {
	g, err := NewSSRFGuard([]string{"127.0.0.1/32"}, fakeResolver{"mixed.test": {"127.0.0.1", "10.0.0.7"}})
	require.NoError(t, err)
	_, err = g.DialContext(context.Background(), "tcp", "mixed.test:80")
	require.ErrorContains(t, err, "mixed.test resolves to 10.0.0.7, a private address")
}

func TestSSRFControlHookChecksTheSocketAddress(t *testing.T) {
	g, err := NewSSRFGuard(nil, nil)
	require.NoError(t, err)
	hook := g.controlHook("example.test")
	require.ErrorContains(t, hook("tcp4", "10.0.0.1:80", nil), "example.test resolves to 10.0.0.1")
	require.ErrorContains(t, hook("tcp6", "[fe80::1%eth0]:80", nil), "link-local")
	require.NoError(t, hook("tcp4", "93.184.216.34:443", nil))
}

// FuzzSSRFClassify checks that an IPv4 address and its IPv6-mapped form are
// always judged alike, and that a /32 whitelist entry admits both forms.
func FuzzSSRFClassify(f *testing.F) {
	for _, s := range [][4]byte{{127, 0, 0, 1}, {10, 1, 2, 3}, {8, 8, 8, 8}, {169, 254, 169, 254}, {100, 64, 0, 0}, {0, 0, 0, 0}} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, a, b, c, d byte) {
		v4 := netip.AddrFrom4([4]byte{a, b, c, d})
		mapped := netip.AddrFrom16(v4.As16())
		if classifyIP(v4) != classifyIP(mapped) {
			t.Fatalf("%s and %s judged differently", v4, mapped)
		}
		nat64 := netip.AddrFrom16([16]byte{0, 0x64, 0xff, 0x9b, 10: 0, 11: 0, 12: a, 13: b, 14: c, 15: d})
		if classifyIP(v4) != classifyIP(nat64) {
			t.Fatalf("%s and %s judged differently", v4, nat64)
		}
		g, err := NewSSRFGuard([]string{v4.String() + "/32"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if g.CheckIP("", v4) != nil || g.CheckIP("", mapped) != nil {
			t.Fatalf("whitelisted %s still blocked", v4)
		}
	})
}
