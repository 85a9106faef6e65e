package tools

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// providerServer answers as one provider's API does, after checking the
// request the tool sent: method, path, credential and body.
type providerServer struct {
	method, path string
	header       [2]string // name, wanted value
	checkBody    func(t *testing.T, body map[string]any, query map[string][]string)
	answer       string
}

func (p providerServer) serve(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := map[string]any{}
		if r.Method == http.MethodPost {
			raw, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(raw, &body); err != nil || r.Header.Get("Content-Type") != "application/json" {
				http.Error(w, "want a JSON body", http.StatusBadRequest)
				return
			}
		}
		if r.Method != p.method || r.URL.Path != p.path || r.Header.Get(p.header[0]) != p.header[1] {
			http.Error(w, fmt.Sprintf("unexpected %s %s (%s: %q)", r.Method, r.URL.Path, p.header[0], r.Header.Get(p.header[0])), http.StatusBadRequest)
			return
		}
		if p.checkBody != nil {
			p.checkBody(t, body, r.URL.Query())
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, p.answer)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSearchProvidersAtTheWire: each provider's request and answer shapes,
// as nanobot speaks them, against a server on 127.0.0.1.
func TestSearchProvidersAtTheWire(t *testing.T) {
	const want = "Results for: night trains\n\n1. Night trains in Europe\n   https://trains.example/night\n   Sleeper cabins from Berlin."
	for _, tc := range []struct {
		provider string
		srv      providerServer
		opts     WebOptions
		want     string
	}{
		{provider: "brave", opts: WebOptions{SearchAPIKey: "brave-key"}, srv: providerServer{method: "GET", path: "/res/v1/web/search", header: [2]string{"X-Subscription-Token", "brave-key"},
			checkBody: func(t *testing.T, _ map[string]any, q map[string][]string) {
				require.Equal(t, []string{"night trains"}, q["q"])
				require.Equal(t, []string{"3"}, q["count"])
			},
			answer: `{"web":{"results":[{"title":"Night trains in Europe","url":"https://trains.example/night","description":"Sleeper cabins from Berlin."}]}}`}},
		{provider: "tavily", opts: WebOptions{SearchAPIKey: "tvly-key"}, srv: providerServer{method: "POST", path: "/search", header: [2]string{"Authorization", "Bearer tvly-key"},
			checkBody: func(t *testing.T, b map[string]any, _ map[string][]string) {
				require.Equal(t, map[string]any{"query": "night trains", "max_results": float64(3)}, b)
			},
			answer: `{"query":"night trains","results":[{"title":"Night trains in Europe","url":"https://trains.example/night","content":"Sleeper cabins from Berlin.","score":0.9}]}`}},
		{provider: "jina", opts: WebOptions{SearchAPIKey: "jina-key"}, srv: providerServer{method: "GET", path: "/night trains", header: [2]string{"Authorization", "Bearer jina-key"},
			answer: `{"code":200,"data":[{"title":"Night trains in Europe","url":"https://trains.example/night","content":"Sleeper cabins from Berlin."},{"title":"b","url":"u2","content":""},{"title":"c","url":"u3"},{"title":"d","url":"u4"}]}`},
			want: want + "\n2. b\n   u2\n3. c\n   u3"},
		{provider: "exa", opts: WebOptions{SearchAPIKey: "exa-key"}, srv: providerServer{method: "POST", path: "/search", header: [2]string{"X-Api-Key", "exa-key"},
			checkBody: func(t *testing.T, b map[string]any, _ map[string][]string) {
				require.Equal(t, map[string]any{"query": "night trains", "numResults": float64(3), "contents": map[string]any{"highlights": true}}, b)
			},
			answer: `{"results":[{"title":"Night trains in Europe","url":"https://trains.example/night","highlights":["Sleeper cabins from Berlin."]},{"title":"No highlights","url":"https://e.example/2","summary":"A summary."}]}`},
			want: want + "\n2. No highlights\n   https://e.example/2\n   A summary."},
		{provider: "bocha", opts: WebOptions{SearchAPIKey: "sk-bocha"}, srv: providerServer{method: "POST", path: "/v1/web-search", header: [2]string{"Authorization", "Bearer sk-bocha"},
			checkBody: func(t *testing.T, b map[string]any, _ map[string][]string) {
				require.Equal(t, map[string]any{"query": "night trains", "freshness": "noLimit", "summary": true, "count": float64(3)}, b)
			},
			answer: `{"code":200,"data":{"webPages":{"value":[{"name":"Night trains in Europe","url":"https://trains.example/night","snippet":"short","summary":"Sleeper cabins from Berlin."}]}}}`}},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			srv := tc.srv.serve(t)
			opts := tc.opts
			opts.SearchProvider, opts.SearchEndpoint = tc.provider, srv.URL+tc.srv.path
			if tc.provider == "jina" {
				opts.SearchEndpoint = srv.URL
			}
			opts.Getenv = func(string) string { return "" }
			env, r := builtinEnv(t, BuiltinOptions{DisableFiles: true, WebEnabled: true, Web: opts})
			res := call(t, r, env, "web_search", map[string]any{"query": "night trains", "count": 3})
			require.False(t, res.IsError, res.Text)
			wantText := tc.want
			if wantText == "" {
				wantText = want
			}
			require.Equal(t, wantText, res.Text)
		})
	}
}

// TestSearXNGAtItsBaseURL: SearXNG's credential is its address (baseUrl),
// asked for JSON at <base>/search; the key may come from the environment.
func TestSearXNGAtItsBaseURL(t *testing.T) {
	srv := providerServer{method: "GET", path: "/searx/search", header: [2]string{"User-Agent", webDefaultUserAgent},
		checkBody: func(t *testing.T, _ map[string]any, q map[string][]string) {
			require.Equal(t, []string{"json"}, q["format"])
			require.Equal(t, []string{"night trains"}, q["q"])
		},
		answer: `{"query":"night trains","results":[{"title":"Night trains in Europe","url":"https://trains.example/night","content":"Sleeper cabins from Berlin.","engine":"ddg"}]}`}.serve(t)
	for name, opts := range map[string]WebOptions{
		"baseUrl":          {SearchProvider: "searxng", SearchBaseURL: srv.URL + "/searx/"},
		"SEARXNG_BASE_URL": {SearchProvider: "searxng", Getenv: func(k string) string { return map[string]string{"SEARXNG_BASE_URL": srv.URL + "/searx"}[k] }},
	} {
		t.Run(name, func(t *testing.T) {
			env, r := builtinEnv(t, BuiltinOptions{DisableFiles: true, WebEnabled: true, Web: opts})
			res := call(t, r, env, "web_search", map[string]any{"query": "night trains"})
			require.False(t, res.IsError, res.Text)
			require.Contains(t, res.Text, "1. Night trains in Europe\n   https://trains.example/night\n   Sleeper cabins from Berlin.")
		})
	}
}

// TestChooseSearchFallsBackOnlyWithoutACredential: DuckDuckGo stands in
// for a provider that lacks its credential (with a warning saying which),
// never for one that has it; the environment's variable counts.
func TestChooseSearchFallsBackOnlyWithoutACredential(t *testing.T) {
	env := map[string]string{"EXA_API_KEY": "from-env"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		provider, key, base string
		want, cred, warning string
	}{
		{provider: "brave", key: "k", want: "brave", cred: "k"},
		{provider: "exa", want: "exa", cred: "from-env"},
		{provider: "Tavily", want: "duckduckgo", warning: `tools.web.search.provider "tavily" needs tools.web.search.apiKey or TAVILY_API_KEY: web_search falls back to DuckDuckGo`},
		{provider: "", want: "duckduckgo", warning: `tools.web.search.provider "brave" needs tools.web.search.apiKey or BRAVE_API_KEY: web_search falls back to DuckDuckGo`},
		{provider: "searxng", key: "not-a-url", want: "duckduckgo", warning: `tools.web.search.provider "searxng" needs tools.web.search.baseUrl or SEARXNG_BASE_URL: web_search falls back to DuckDuckGo`},
		{provider: "searxng", base: "https://searx.example", want: "searxng", cred: "https://searx.example"},
		{provider: "duckduckgo", want: "duckduckgo"},
		{provider: "bocha", key: "k", base: "https://searx.example", want: "bocha", cred: "k", warning: `tools.web.search.baseUrl is read for searxng only; it has no effect with "bocha"`},
		{provider: "kagi", key: "k", want: "duckduckgo", warning: `tools.web.search.provider "kagi" is not supported in this build: web_search falls back to DuckDuckGo`},
		{provider: "googol", want: "", warning: `tools.web.search.provider "googol" is not a search provider (bocha, brave, duckduckgo, exa, jina, searxng, tavily): every web_search answers with an error`},
	} {
		c := ChooseSearch(tc.provider, tc.key, tc.base, getenv)
		require.Equal(t, tc.want, c.Provider, tc.provider)
		require.Equal(t, tc.cred, c.Credential, tc.provider)
		require.Equal(t, tc.warning, c.Warning, tc.provider)
	}

	_, r := builtinEnv(t, BuiltinOptions{DisableFiles: true, WebEnabled: true, Web: WebOptions{SearchProvider: "googol"}})
	res := call(t, r, Env{SessionKey: "s"}, "web_search", map[string]any{"query": "x"})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "Error: unknown search provider 'googol'")
}
