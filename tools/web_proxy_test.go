package tools

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// forwardProxy is an HTTP proxy on 127.0.0.1 that answers every request
// itself (nothing leaves this machine) and records what it was asked for.
type forwardProxy struct {
	mu   sync.Mutex
	seen []string // absolute request URLs
	srv  *httptest.Server
}

func newForwardProxy(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *forwardProxy {
	t.Helper()
	p := &forwardProxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, r.URL.String())
		p.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *forwardProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// TestWebToolsGoThroughTheProxy: with tools.web.proxy, search, fetch and
// Jina's reader reach the web through the proxy, and the SSRF guard still
// refuses internal targets before the proxy hears of them.
func TestWebToolsGoThroughTheProxy(t *testing.T) {
	proxy := newForwardProxy(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Host {
		case "search.test":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"web":{"results":[{"title":"Via proxy","url":"https://p.example/","description":"found"}]}}`)
		case "news.test":
			if r.URL.Path == "/moved" {
				http.Redirect(w, r, "http://internal.test/admin", http.StatusFound)
				return
			}
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><title>News</title></head><body><p>Fetched through the proxy.</p></body></html>`)
		case "reader.test":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"code":200,"data":{"title":"News","content":"Read by Jina through the proxy.","url":"http://news.test/jina"}}`)
		default:
			http.Error(w, "unexpected host "+r.Host, http.StatusBadGateway)
		}
	})
	resolver := fakeResolver{"news.test": {"192.0.2.10"}, "internal.test": {"10.0.0.7"}}
	web := WebOptions{Proxy: proxy.srv.URL, SearchProvider: "brave", SearchAPIKey: "k", SearchEndpoint: "http://search.test/res/v1/web/search",
		JinaReaderEndpoint: "http://reader.test", FetchTimeout: 5 * time.Second}
	env, r := builtinEnv(t, BuiltinOptions{DisableFiles: true, WebEnabled: true, Resolver: resolver, Web: web})

	res := call(t, r, env, "web_search", map[string]any{"query": "q"})
	require.False(t, res.IsError, res.Text)
	require.Contains(t, res.Text, "1. Via proxy")

	res = call(t, r, env, "web_fetch", map[string]any{"url": "http://news.test/page"})
	require.False(t, res.IsError, res.Text)
	require.Contains(t, res.Text, "Fetched through the proxy.")

	res = call(t, r, env, "web_fetch", map[string]any{"url": "http://internal.test/admin"})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "internal.test resolves to 10.0.0.7, a private address")
	res = call(t, r, env, "web_fetch", map[string]any{"url": "http://news.test/moved"})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "internal.test resolves to 10.0.0.7, a private address", "each hop is checked before the proxy sees it")

	jinaWeb := web
	jinaWeb.UseJinaReader = true
	env, r = builtinEnv(t, BuiltinOptions{DisableFiles: true, WebEnabled: true, Resolver: resolver, Web: jinaWeb})
	res = call(t, r, env, "web_fetch", map[string]any{"url": "http://news.test/article"})
	require.False(t, res.IsError, res.Text)
	require.Contains(t, res.Text, "extractor jina")
	require.Contains(t, res.Text, "# News\n\nRead by Jina through the proxy.")

	require.Equal(t, []string{
		"http://search.test/res/v1/web/search?count=5&q=q",
		"http://news.test/page",
		"http://news.test/moved",
		"http://news.test/article",
		"http://reader.test/http://news.test/article",
	}, proxy.requests(), "the internal host never reached the proxy")
}

// TestWebFetchThroughASOCKSProxy: a socks5 proxy URL works as well; the
// proxy on 127.0.0.1 sees the target the tool asked for.
func TestWebFetchThroughASOCKSProxy(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "hello over socks")
	}))
	t.Cleanup(page.Close)
	targets := make(chan string, 4)
	socks := startSOCKS5(t, page.Listener.Addr().String(), targets)
	resolver := fakeResolver{"socks.test": {"192.0.2.10"}}
	env, r := builtinEnv(t, BuiltinOptions{DisableFiles: true, WebEnabled: true, Resolver: resolver,
		Web: WebOptions{Proxy: "socks5://" + socks, FetchTimeout: 5 * time.Second}})
	res := call(t, r, env, "web_fetch", map[string]any{"url": "http://socks.test:8080/x"})
	require.False(t, res.IsError, res.Text)
	require.Contains(t, res.Text, "hello over socks")
	require.Equal(t, "socks.test:8080", <-targets)
}

func TestBadProxyIsAConfigError(t *testing.T) {
	for _, p := range []string{"ftp://proxy.example:21", "http://", "::"} {
		err := RegisterBuiltins(NewRegistry(), BuiltinOptions{WebEnabled: true, Web: WebOptions{Proxy: p}})
		require.ErrorContains(t, err, "tools.web.proxy", p)
	}
	u, err := ParseWebProxy("socks5h://user:pw@127.0.0.1:1080")
	require.NoError(t, err)
	require.Equal(t, "socks5h", u.Scheme)
}

// startSOCKS5 serves SOCKS5 (no auth, CONNECT) on 127.0.0.1: it records the
// requested target and connects every request to backend instead.
func startSOCKS5(t *testing.T, backend string, targets chan<- string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveSOCKS5(c, backend, targets)
		}
	}()
	return ln.Addr().String()
}

func serveSOCKS5(c net.Conn, backend string, targets chan<- string) {
	defer c.Close()
	hdr := make([]byte, 2)
	if _, err := io.ReadFull(c, hdr); err != nil || hdr[0] != 5 {
		return
	}
	if _, err := io.ReadFull(c, make([]byte, hdr[1])); err != nil {
		return
	}
	_, _ = c.Write([]byte{5, 0}) // no authentication
	req := make([]byte, 4)
	if _, err := io.ReadFull(c, req); err != nil || req[1] != 1 {
		return
	}
	var host string
	switch req[3] {
	case 1:
		ip := make([]byte, 4)
		_, _ = io.ReadFull(c, ip)
		host = net.IP(ip).String()
	case 3:
		n := make([]byte, 1)
		_, _ = io.ReadFull(c, n)
		name := make([]byte, n[0])
		_, _ = io.ReadFull(c, name)
		host = string(name)
	default:
		return
	}
	port := make([]byte, 2)
	if _, err := io.ReadFull(c, port); err != nil {
		return
	}
	targets <- net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port))))
	up, err := net.Dial("tcp", backend)
	if err != nil {
		_, _ = c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
		return
	}
	defer up.Close()
	_, _ = c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0})
	go func() { _, _ = io.Copy(up, c) }()
	_, _ = io.Copy(c, up)
}
