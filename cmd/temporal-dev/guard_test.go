package main

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	"go.temporal.io/server/common/config"
)

func TestAllowedHosts(t *testing.T) {
	for _, c := range []struct {
		listen string
		extra  []string
		ok, no []string
	}{
		{"127.0.0.1", nil, []string{"127.0.0.1:8233", "localhost:8233", "[::1]:8233", "LOCALHOST.", ""}, []string{"evil.example:8233", "10.0.0.1"}},
		{"0.0.0.0", []string{"temporal.lan:8233"}, []string{"10.0.0.1:8233", "[fe80::1]:8233", "temporal.lan"}, []string{"evil.example"}},
		{"10.0.0.1", nil, []string{"10.0.0.1:8233"}, []string{"10.0.0.2:8233", "evil.example"}},
	} {
		h := newAllowedHosts(c.listen, c.extra, "--ui-allowed-host")
		for _, host := range c.ok {
			if !h.allows(host) {
				t.Errorf("on %s: Host %q refused", c.listen, host)
			}
		}
		for _, host := range c.no {
			if h.allows(host) {
				t.Errorf("on %s: Host %q let through", c.listen, host)
			}
		}
	}
}

// TestUIAnswersOnlyItsHostNames: the Web UI, assembled here so the Host check sits in
// front of all of it, refuses a foreign Host on its pages and its /api/v1 with 421 and
// serves the names it is bound to (its gRPC connection to the frontend is lazy).
func TestUIAnswersOnlyItsHostNames(t *testing.T) {
	h, err := uiHandler(&uiconfig.Config{TemporalGRPCAddress: "127.0.0.1:1", Host: "127.0.0.1", Port: 1, EnableUI: true,
		DefaultNamespace: defaultNamespace, CORS: uiconfig.CORS{CookieInsecure: true}, HideLogs: true, DisableNewsFetch: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newAllowedHosts("127.0.0.1", []string{"temporal.lan"}, "--ui-allowed-host").guard(h))
	defer srv.Close()
	get := func(path, host string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Host = host
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}
	for _, path := range []string{"/", "/namespaces/default/workflows", "/api/v1/namespaces/default/workflows", "/api/v1/settings"} {
		if status, body := get(path, "evil.example:8233"); status != http.StatusMisdirectedRequest || !strings.Contains(body, "--ui-allowed-host") {
			t.Errorf("foreign Host on %s: %d %q, want 421 naming --ui-allowed-host", path, status, body)
		}
	}
	for _, host := range []string{"127.0.0.1:8233", "localhost:8233", "[::1]:8233", "temporal.lan:8233"} {
		for _, path := range []string{"/", "/api/v1/settings"} {
			if status, body := get(path, host); status != http.StatusOK {
				t.Errorf("%s as %s: %d %.200s", path, host, status, body)
			}
		}
	}
}

// TestHTTPAPIIsOffUnlessAsked: nothing nanobot runs uses the frontend's HTTP API, so it is
// not served by default; --http-port serves it behind the server's own Host check.
func TestHTTPAPIIsOffUnlessAsked(t *testing.T) {
	o := mustParse(t)
	ep, err := resolveEndpoints(o)
	if err != nil {
		t.Fatal(err)
	}
	cfg := serverConfig(o, ep, config.Persistence{}, nil)
	if p := cfg.Services["frontend"].RPC.HTTPPort; p != 0 || ep.httpAddr(o) != "" || cfg.PublicClient.HTTPHostPort != "" {
		t.Errorf("HTTP API on by default: port %d, addr %q", p, ep.httpAddr(o))
	}
	dc := defaultDynamicConfig("", nil)
	if _, ok := dc["frontend.httpAllowedHosts"]; ok {
		t.Error("allowed hosts set for an HTTP API that is off")
	}
	if _, ok := dc["component.nexusoperations.callback.endpoint.template"]; ok {
		t.Error("Nexus callbacks point at an HTTP API that is off")
	}

	o = mustParse(t, "--http-port", "7243", "--ui-allowed-host", "temporal.lan")
	patterns := httpAllowedHosts(o)
	for _, want := range []string{"127.0.0.1:*", "localhost:*", "[::1]:*", "temporal.lan:*", "temporal.lan"} {
		if !slices.Contains(patterns, want) {
			t.Errorf("frontend.httpAllowedHosts %v lacks %s", patterns, want)
		}
	}
	if slices.Contains(patterns, "*") {
		t.Errorf("frontend.httpAllowedHosts %v lets any Host in", patterns)
	}
}
