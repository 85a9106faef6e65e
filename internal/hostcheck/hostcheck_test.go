package hostcheck

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHostsServeOnlyTheirNames(t *testing.T) {
	for _, c := range []struct {
		listen  string
		allowed []string
		ok, no  []string
	}{
		{"127.0.0.1", nil,
			[]string{"127.0.0.1:18790", "localhost", "LOCALHOST:80", "[::1]:18790", "localhost.", "127.0.0.2", ""},
			[]string{"evil.example:18790", "evil.example", "192.168.1.5:18790", "nanobot.lan", "localhost.evil.example"}},
		{"0.0.0.0", []string{"nanobot.lan", "Chat.Example.COM:443"},
			[]string{"192.168.1.5:18790", "[fe80::1]:18790", "nanobot.lan:18790", "chat.example.com", "10.0.0.1"},
			[]string{"evil.example:18790", "nanobot.lan.evil.example"}},
		{"192.168.1.5", nil,
			[]string{"192.168.1.5:18790", "127.0.0.1"},
			[]string{"10.0.0.1:18790", "evil.example"}},
		{"::", nil, []string{"[2001:db8::1]:80", "10.0.0.1"}, []string{"evil.example"}},
		{"nanobot.lan", nil, []string{"nanobot.lan:18790", "localhost"}, []string{"evil.example", "10.0.0.1"}},
	} {
		h := New(c.listen, c.allowed, "channels.web.allowedHosts")
		for _, host := range c.ok {
			require.True(t, h.Allows(host), "listening on %s, Host %q must get through", c.listen, host)
		}
		for _, host := range c.no {
			require.False(t, h.Allows(host), "listening on %s, Host %q must be refused", c.listen, host)
		}
	}
}

func TestGuardAnswers421InOneLine(t *testing.T) {
	served := 0
	h := New("127.0.0.1", []string{"nanobot.lan"}, "channels.web.allowedHosts").Guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { served++ }))
	for _, host := range []string{"127.0.0.1:18790", "localhost:18790", "[::1]:18790", "nanobot.lan:18790"} {
		r := httptest.NewRequest(http.MethodGet, "/api/sessions", nil)
		r.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, http.StatusOK, w.Code, host)
	}
	require.Equal(t, 4, served)
	r := httptest.NewRequest(http.MethodPost, "/api/send", strings.NewReader(`{}`))
	r.Host = "evil.example:18790"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, http.StatusMisdirectedRequest, w.Code)
	require.Equal(t, 4, served, "a refused request reaches nothing")
	body := w.Body.String()
	require.Equal(t, 1, strings.Count(body, "\n"), body)
	require.Contains(t, body, `"evil.example"`)
	require.Contains(t, body, "channels.web.allowedHosts")
}

func TestLoopback(t *testing.T) {
	for _, h := range []string{"127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"} {
		require.True(t, Loopback(h), h)
	}
	for _, h := range []string{"0.0.0.0", "::", "192.168.1.5", "nanobot.lan", ""} {
		require.False(t, Loopback(h), h)
	}
}

// TestMatches: a name matches itself in any case, "*.x" matches names
// under x but not x itself nor a name merely ending in x's letters.
func TestMatches(t *testing.T) {
	patterns := []string{"smba.trafficmanager.net", " *.BotFramework.com "}
	for host, want := range map[string]bool{
		"smba.trafficmanager.net":    true,
		"SMBA.trafficmanager.net.":   true,
		"x.smba.trafficmanager.net":  false,
		"emea.botframework.com":      true,
		"a.b.botframework.com":       true,
		"botframework.com":           false,
		"evilbotframework.com":       false,
		"botframework.com.evil.test": false,
		"":                           false,
	} {
		require.Equal(t, want, Matches(host, patterns), host)
	}
	require.False(t, Matches("", []string{""}))
}
