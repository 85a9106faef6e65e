package tools

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

const testPage = `<!DOCTYPE html><html><head><title>Test Page</title>
<style>body{color:red}</style><script>var secret = "do not show";</script></head>
<body><nav><a href="/home">Nav link</a></nav>
<main>
<h1>Main Heading</h1>
<p>First paragraph with <a href="/docs/x">a relative link</a> and <strong>bold</strong> text.</p>
<h2>Section</h2>
<ul><li>one</li><li>two</li></ul>
<pre>code   block
  indented</pre>
<script>alert("nope")</script>
</main>
<footer>Footer text</footer></body></html>`

// webEnv serves mux on 127.0.0.1 and returns a registry whose web tools may
// reach that server (whitelisted) and whose resolver knows res.
func webEnv(t *testing.T, mux http.Handler, whitelist []string, res Resolver) (Env, *Registry, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	env, r := builtinEnv(t, BuiltinOptions{DisableFiles: true, WebEnabled: true, SSRFWhitelist: whitelist, Resolver: res,
		Web: WebOptions{FetchTimeout: 5 * time.Second, SearchTimeout: 5 * time.Second}})
	return env, r, srv
}

func fetchMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, testPage)
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"a":1,"b":[true]}`)
	})
	mux.HandleFunc("/long", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("é", 60_000))
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		fmt.Fprint(w, "<html><body><p>caf\xe9</p></body></html>")
	})
	mux.HandleFunc("/png", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n"))
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		chunk := strings.Repeat("h", 1<<20)
		for range 11 {
			fmt.Fprint(w, chunk)
		}
	})
	mux.HandleFunc("/missing", http.NotFound)
	// /r/N redirects N times before landing on /page.
	mux.HandleFunc("/r/", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
		if n <= 0 {
			http.Redirect(w, r, "/page", http.StatusFound)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/r/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusFound)
	})
	return mux
}

func TestWebFetch(t *testing.T) {
	env, r, srv := webEnv(t, fetchMux(), []string{"127.0.0.1/32"}, fakeResolver{"internal.test": {"192.168.1.10"}})
	for _, tc := range []struct {
		name  string
		args  map[string]any
		has   []string
		not   []string
		isErr bool
	}{
		{name: "markdown extraction with banner first",
			args: map[string]any{"url": srv.URL + "/page"},
			// readability turns the article's <h1> into "##": the title is the page's one "#" (Readability.js's _prepArticle).
			has: []string{webUntrustedBanner + "\nURL: " + srv.URL + "/page (status 200, extractor readability)\n\n# Test Page\n\n## Main Heading",
				"[a relative link](" + srv.URL + "/docs/x)", "**bold**", "## Section", "- one\n- two", "```\ncode   block\n  indented\n```"},
			not: []string{"do not show", "alert", "Nav link", "Footer text", "color:red"}},
		{name: "text mode", args: map[string]any{"url": srv.URL + "/page", "extractMode": "text"},
			has: []string{"Main Heading", "a relative link", "- one"}, not: []string{"](", "**", "```", "## "}},
		{name: "json pretty-printed", args: map[string]any{"url": srv.URL + "/json"},
			has: []string{"extractor json", "{\n  \"a\": 1,\n  \"b\": [\n    true\n  ]\n}"}},
		{name: "charset decoded", args: map[string]any{"url": srv.URL + "/latin1"}, has: []string{"café"}},
		{name: "5 redirects followed", args: map[string]any{"url": srv.URL + "/r/4"}, has: []string{"URL: " + srv.URL + "/page", "Requested: " + srv.URL + "/r/4", "Main Heading"}},
		{name: "6th redirect refused", args: map[string]any{"url": srv.URL + "/r/5"}, has: []string{"Error: Too many redirects: exceeded limit of 5"}, isErr: true},
		{name: "redirect to a private IP", args: map[string]any{"url": srv.URL + "/to?u=http://10.0.0.1/secret"},
			has: []string{"Error: URL blocked by SSRF guard: 10.0.0.1 is a private address (this restriction is non-bypassable)"}, isErr: true},
		{name: "redirect to cloud metadata", args: map[string]any{"url": srv.URL + "/to?u=http://169.254.169.254/latest"},
			has: []string{"169.254.169.254 is a link-local address", "non-bypassable"}, isErr: true},
		{name: "redirect to a host resolving privately", args: map[string]any{"url": srv.URL + "/to?u=http://internal.test/x"},
			has: []string{"internal.test resolves to 192.168.1.10, a private address (this restriction is non-bypassable)"}, isErr: true},
		{name: "redirect to another scheme", args: map[string]any{"url": srv.URL + "/to?u=file:///etc/passwd"},
			has: []string{"only http/https"}, isErr: true},
		{name: "direct private IP", args: map[string]any{"url": "http://192.168.0.1/admin"},
			has: []string{"Error: URL blocked by SSRF guard: 192.168.0.1 is a private address (this restriction is non-bypassable)"}, isErr: true},
		{name: "IPv6-mapped loopback outside the whitelist", args: map[string]any{"url": "http://[::ffff:127.0.0.2]/"},
			has: []string{"(127.0.0.2) is a loopback address"}, isErr: true},
		{name: "scheme refused", args: map[string]any{"url": "file:///etc/passwd"}, has: []string{"Error: URL validation failed: only http/https URLs are allowed, got 'file'"}, isErr: true},
		{name: "HTTP error", args: map[string]any{"url": srv.URL + "/missing"}, has: []string{"Error: HTTP 404 Not Found"}, isErr: true},
		{name: "binary content", args: map[string]any{"url": srv.URL + "/png"}, has: []string{"image/png content, which web_fetch cannot read"}, isErr: true},
		{name: "quotes and backticks trimmed", args: map[string]any{"url": " `" + srv.URL + "/json` "}, has: []string{"extractor json"}},
		{name: "maxChars below 100 rejected", args: map[string]any{"url": srv.URL + "/json", "maxChars": 99}, has: []string{"Invalid parameters"}, isErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := env
			env.SessionKey = "fetch:" + tc.name // keep the repeated-lookup guard out of the way
			res := call(t, r, env, "web_fetch", tc.args)
			require.Equal(t, tc.isErr, res.IsError, res.Text)
			if !tc.isErr {
				require.True(t, strings.HasPrefix(res.Text, webUntrustedBanner+"\n"), res.Text)
			}
			for _, h := range tc.has {
				require.Contains(t, res.Text, h)
			}
			for _, n := range tc.not {
				require.NotContains(t, res.Text, n)
			}
		})
	}
}

func TestWebFetchLimits(t *testing.T) {
	env, r, srv := webEnv(t, fetchMux(), []string{"127.0.0.1/32"}, nil)
	content := func(text string) string {
		_, body, _ := strings.Cut(text, "\n\n")
		return body
	}
	for _, tc := range []struct {
		name     string
		path     string
		maxChars any
		want     int
		note     string
	}{
		{name: "default 50000", maxChars: nil, want: 50_000, note: "(Truncated: showing the first 50000 of 60000 characters.)"},
		{name: "smaller maxChars", maxChars: 100, want: 100, note: "(Truncated: showing the first 100 of 60000 characters.)"},
		{name: "larger maxChars capped at 50000", maxChars: 80_000, want: 50_000, note: "first 50000 of 60000"},
		{name: "body read up to 10 MB", path: "/huge", want: 50_000, note: "(Truncated: the page is larger than 10 MB; showing the first 50000 characters of its start.)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = "/long"
			}
			args := map[string]any{"url": srv.URL + path}
			if tc.maxChars != nil {
				args["maxChars"] = tc.maxChars
			}
			env := env
			env.SessionKey = "limits:" + tc.name
			res := call(t, r, env, "web_fetch", args)
			require.False(t, res.IsError, res.Text)
			require.Equal(t, tc.want, utf8.RuneCountInString(content(res.Text)))
			require.Contains(t, res.Text, tc.note)
		})
	}
}

func TestWebFetchNoWhitelistNeverConnects(t *testing.T) {
	srv, hits, mu := countingServer(t)
	env, r := builtinEnv(t, BuiltinOptions{DisableFiles: true, WebEnabled: true})
	res := call(t, r, env, "web_fetch", map[string]any{"url": srv.URL})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "127.0.0.1 is a loopback address (this restriction is non-bypassable)")
	mu.Lock()
	defer mu.Unlock()
	require.Zero(t, *hits, "the guard refuses before connecting")
}

func TestWebFetchDNSRebinding(t *testing.T) {
	srv, hits, mu := countingServer(t)
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	res := &seqResolver{answers: [][]string{{"127.0.0.1"}, {"10.0.0.1"}}}
	env, r := builtinEnv(t, BuiltinOptions{DisableFiles: true, WebEnabled: true, SSRFWhitelist: []string{"127.0.0.1/32"}, Resolver: res})

	out := call(t, r, env, "web_fetch", map[string]any{"url": "http://rebind.test:" + port + "/a"})
	require.False(t, out.IsError, out.Text)
	require.Contains(t, out.Text, "hello from rebind.test:"+port)
	require.Equal(t, 1, res.count(), "resolved once; the checked address was the one connected to")

	out = call(t, r, env, "web_fetch", map[string]any{"url": "http://rebind.test:" + port + "/b"})
	require.True(t, out.IsError)
	require.Contains(t, out.Text, "rebind.test resolves to 10.0.0.1, a private address")
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 1, *hits, "the rebound answer was never dialled")
}

func TestRepeatedExternalLookups(t *testing.T) {
	env, r, srv := webEnv(t, fetchMux(), []string{"127.0.0.1/32"}, nil)
	fetch := func(env Env, u string) Result {
		return call(t, r, env, "web_fetch", map[string]any{"url": u})
	}
	u := srv.URL + "/json"
	require.False(t, fetch(env, u).IsError)
	require.False(t, fetch(env, strings.ToUpper(u[:4])+u[4:]).IsError, "second attempt (case-insensitive match) allowed")
	third := fetch(env, u+" ")
	require.True(t, third.IsError)
	require.Contains(t, third.Text, "Error: repeated external lookup blocked. Use the results you already have")

	other := env
	other.SessionKey = "cli:other"
	require.False(t, fetch(other, u).IsError, "counters are per session")
	nextTurn := env
	nextTurn.Turn = "turn-2"
	require.False(t, fetch(nextTurn, u).IsError, "counters are per turn")
}

func TestLookupGuardWindowAndLRU(t *testing.T) {
	g := NewLookupGuard()
	now := time.Unix(1000, 0)
	g.now = func() time.Time { return now }
	env := Env{SessionKey: "s"}
	require.True(t, g.allow(env, "web_search:q"))
	require.True(t, g.allow(env, "web_search:q"))
	require.False(t, g.allow(env, "web_search:q"))
	now = now.Add(lookupWindow + time.Second)
	require.True(t, g.allow(env, "web_search:q"), "without Env.Turn a turn is approximated by a 10-minute window")

	for i := range lookupMaxEntries + 10 {
		g.allow(env, fmt.Sprintf("web_fetch:%d", i))
	}
	require.Equal(t, lookupMaxEntries, g.order.Len())
	require.Len(t, g.entries, lookupMaxEntries)
}

func TestWebFetchHonoursContext(t *testing.T) {
	block := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	env, r, srv := webEnv(t, mux, []string{"127.0.0.1/32"}, nil)
	defer close(block)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	tool := mustGet(t, r, "web_fetch")
	res := tool.Run(ctx, env, map[string]any{"url": srv.URL + "/slow"})
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "context deadline exceeded")
}

func TestHTMLToText(t *testing.T) {
	for _, tc := range []struct {
		name, page, want string
		markdown         bool
	}{
		{name: "omitted </head> and </li>", page: "<html><head><title>T</title><body><ul><li>a<li>b</ul>", want: "# T\n\n- a\n- b"},
		// readability scores content rather than tags: chrome goes by its class (sidebar, comments), not for being outside <article>.
		{name: "the article, not the chrome around it", page: `<title>Trains</title><div class="sidebar"><p>Subscribe to our newsletter.</p></div><article><p>` +
			strings.Repeat("The night train leaves at nine and arrives before dawn. ", 12) + `</p></article><div class="comments"><p>First comment!</p></div>`,
			want: "# Trains\n\n" + strings.TrimSpace(strings.Repeat("The night train leaves at nine and arrives before dawn. ", 12))},
		{name: "hidden elements dropped", page: "<p>shown</p><div hidden>secret</div><span aria-hidden=\"true\">x</span>", want: "shown"},
		{name: "whitespace collapsed, tables kept", page: "<div>Hello <b>world</b>,<span>  spaced </span>text</div><table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>",
			want: "Hello **world**, spaced text\n\nA | B\n1 | 2", markdown: true},
		{name: "inline code and nested link text", page: `<p>call <code>f()</code> or <a href="https://e.example/x">the <em>docs</em></a>.</p>`,
			want: "call `f()` or [the docs](https://e.example/x).", markdown: true},
		{name: "fragment and javascript links stay text", page: `<p><a href="#top">top</a> <a href="javascript:x()">js</a></p>`, want: "top js", markdown: true},
		{name: "entities", page: "<p>a &amp; b &lt;c&gt;</p>", want: "a & b <c>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, extractor, err := htmlToText(strings.NewReader(tc.page), nil, tc.markdown)
			require.NoError(t, err)
			require.Equal(t, tc.want, text)
			require.Equal(t, "readability", extractor)
		})
	}
}

// A page readability cannot take is rendered whole, without its chrome.
func TestHTMLFallbackDropsChrome(t *testing.T) {
	_, text, err := renderHTML([]byte(`<nav>menu</nav><form>search</form><main><p>kept</p></main><aside>ad</aside><footer>f</footer>`), nil, false, true)
	require.NoError(t, err)
	require.Equal(t, "kept", text)
	_, text, err = renderHTML([]byte(`<nav>menu</nav><p>kept</p>`), nil, false, false)
	require.NoError(t, err)
	require.Equal(t, "menu\n\nkept", text, "readability's article is rendered as it is")
}

// A hostile page of deeply nested tags costs linear time and no deep recursion.
func TestHTMLToTextDeepNesting(t *testing.T) {
	page := strings.Repeat("<div><b>", 150_000) + "deep text" + strings.Repeat("</b></div>", 150_000)
	start := time.Now()
	text, extractor, err := htmlToText(strings.NewReader(page), nil, false)
	require.NoError(t, err)
	require.Equal(t, "deep text", text)
	require.Equal(t, "html", extractor, "too large for readability's tree: rendered by the streaming renderer")
	require.Less(t, time.Since(start), 20*time.Second, "linear in the page size")
}
