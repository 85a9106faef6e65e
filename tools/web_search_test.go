package tools

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

const braveBody = `{"type":"search","web":{"results":[
 {"title":"The <strong>Go</strong> Programming Language","url":"https://go.dev/","description":"Go is an open source <strong>programming</strong> language &amp; more."},
 {"title":"Go (programming language) - Wikipedia","url":"https://en.wikipedia.org/wiki/Go_(programming_language)","description":"Go is a statically typed language."},
 {"title":"Tour","url":"https://go.dev/tour/","description":""}
]}}`

const ddgBody = `<!DOCTYPE html><html><body><div class="serp__results"><div id="links" class="results">
<div class="result results_links results_links_deep result--ad">
  <div class="links_main links_deep result__body"><h2 class="result__title">
  <a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=ads.example&amp;u3=x">Sponsored thing</a></h2>
  <a class="result__snippet" href="https://duckduckgo.com/y.js?x">Buy now</a></div></div>
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body"><h2 class="result__title">
  <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fgo.dev%2F&amp;rut=abc">The <b>Go</b> Programming Language</a></h2>
  <div class="result__extras"><a class="result__url" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fgo.dev%2F">go.dev</a></div>
  <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fgo.dev%2F">Go is an open source <b>programming</b> language that makes it simple to build software.</a>
  </div></div>
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body"><h2 class="result__title">
  <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fpkg.go.dev%2Fstd%3Ftab%3Dx&amp;rut=def">Standard library - Go Packages</a></h2>
  <a class="result__snippet" href="//duckduckgo.com/l/?uddg=x">Packages &amp; docs.</a>
  </div></div>
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body"><h2 class="result__title">
  <a rel="nofollow" class="result__a" href="https://direct.example/page">Direct link</a></h2>
  </div></div>
</div></div></body></html>`

const ddgNoResults = `<html><body><div class="no-results">No results.</div></body></html>`

// searchEnv serves handler and returns a registry with web_search pointed at it.
func searchEnv(t *testing.T, handler http.HandlerFunc, web WebOptions) (Env, *Registry) {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	web.SearchEndpoint = srv.URL + "/search"
	env, r := builtinEnv(t, BuiltinOptions{DisableFiles: true, WebEnabled: true, Web: web})
	return env, r
}

func TestWebSearchBrave(t *testing.T) {
	var lastCount atomic.Value
	env, r := searchEnv(t, func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet || req.URL.Path != "/search" || req.Header.Get("X-Subscription-Token") != "key-1" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		switch req.URL.Query().Get("q") {
		case "slow down":
			w.WriteHeader(http.StatusTooManyRequests)
			return
		case "broken":
			w.WriteHeader(http.StatusInternalServerError)
			return
		case "empty":
			fmt.Fprint(w, `{"web":{"results":[]}}`)
			return
		}
		lastCount.Store(req.URL.Query().Get("count"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, braveBody)
	}, WebOptions{SearchProvider: "brave", SearchAPIKey: "key-1"})

	res := call(t, r, env, "web_search", map[string]any{"query": "golang"})
	require.False(t, res.IsError, res.Text)
	require.Equal(t, "Results for: golang\n\n"+
		"1. The Go Programming Language\n   https://go.dev/\n   Go is an open source programming language & more.\n"+
		"2. Go (programming language) - Wikipedia\n   https://en.wikipedia.org/wiki/Go_(programming_language)\n   Go is a statically typed language.\n"+
		"3. Tour\n   https://go.dev/tour/", res.Text)
	require.Equal(t, "5", lastCount.Load(), "count defaults to maxResults 5")

	res = call(t, r, env, "web_search", map[string]any{"query": "golang two", "count": 2})
	require.Equal(t, "2", lastCount.Load())
	require.NotContains(t, res.Text, "3. Tour", "count caps the list")

	for q, want := range map[string]string{
		"slow down": "Error: Brave search rate limited",
		"broken":    "Error: Brave search failed: HTTP 500",
		"empty":     "No results for: empty",
	} {
		res := call(t, r, env, "web_search", map[string]any{"query": q})
		require.Contains(t, res.Text, want, q)
	}
	require.Contains(t, call(t, r, env, "web_search", map[string]any{"query": "x", "count": 11}).Text, "Invalid parameters")
}

func TestWebSearchDuckDuckGo(t *testing.T) {
	env, r := searchEnv(t, func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.ParseForm() != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		if req.PostForm.Get("q") == "nothing" {
			fmt.Fprint(w, ddgNoResults)
			return
		}
		fmt.Fprint(w, ddgBody)
	}, WebOptions{SearchProvider: "duckduckgo", SearchMaxResults: 2})

	res := call(t, r, env, "web_search", map[string]any{"query": "golang"})
	require.False(t, res.IsError, res.Text)
	require.Equal(t, "Results for: golang\n\n"+
		"1. The Go Programming Language\n   https://go.dev/\n   Go is an open source programming language that makes it simple to build software.\n"+
		"2. Standard library - Go Packages\n   https://pkg.go.dev/std?tab=x\n   Packages & docs.", res.Text,
		"ads skipped, redirect links unwrapped, count defaults to maxResults")

	res = call(t, r, env, "web_search", map[string]any{"query": "golang", "count": 10})
	require.Contains(t, res.Text, "3. Direct link\n   https://direct.example/page")
	require.NotContains(t, res.Text, "Sponsored")

	require.Equal(t, "No results for: nothing", call(t, r, env, "web_search", map[string]any{"query": "nothing"}).Text)
	third := call(t, r, env, "web_search", map[string]any{"query": "  GOLANG "})
	require.True(t, third.IsError)
	require.Contains(t, third.Text, "repeated external lookup blocked")
}

func TestWebSearchProviderSelection(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      WebOptions
		provider  string
		exclusive bool
	}{
		{name: "default duckduckgo", opts: WebOptions{SearchProvider: "duckduckgo"}, provider: "duckduckgo", exclusive: true},
		{name: "empty is brave, which lacks a key", opts: WebOptions{Getenv: func(string) string { return "" }}, provider: "duckduckgo", exclusive: true},
		{name: "brave with key", opts: WebOptions{SearchProvider: "brave", SearchAPIKey: "k"}, provider: "brave"},
		{name: "key without provider", opts: WebOptions{SearchAPIKey: "k"}, provider: "brave"},
		{name: "brave without key falls back", opts: WebOptions{SearchProvider: "Brave"}, provider: "duckduckgo", exclusive: true},
		{name: "explicit duckduckgo ignores key", opts: WebOptions{SearchProvider: "duckduckgo", SearchAPIKey: "k"}, provider: "duckduckgo", exclusive: true},
		{name: "a provider this build does not speak falls back", opts: WebOptions{SearchProvider: "kagi", SearchAPIKey: "k"}, provider: "duckduckgo", exclusive: true},
		{name: "tavily with key", opts: WebOptions{SearchProvider: "tavily", SearchAPIKey: "k"}, provider: "tavily"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewWebSearch(tc.opts)
			require.Equal(t, tc.provider, s.choice.Provider)
			require.Equal(t, Flags{ReadOnly: true, Exclusive: tc.exclusive}, s.Flags())
		})
	}
}

func TestDuckDuckGoTarget(t *testing.T) {
	for in, want := range map[string]string{
		"//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.example%2Fx%3Fy%3D1&rut=z": "https://a.example/x?y=1",
		"/l/?uddg=https%3A%2F%2Fb.example%2F":                                "https://b.example/",
		"https://duckduckgo.com/y.js?ad_domain=x":                            "",
		"https://c.example/page":                                             "https://c.example/page",
	} {
		require.Equal(t, want, ddgTarget(in), in)
	}
}
