package tools

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// jinaReader is Jina's reader API on 127.0.0.1: it records the URLs it is
// handed and answers with a rendering of them, or with status.
type jinaReader struct {
	mu     sync.Mutex
	asked  []string
	auth   []string
	status int
}

func (j *jinaReader) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		j.mu.Lock()
		j.asked = append(j.asked, strings.TrimPrefix(r.URL.RequestURI(), "/"))
		j.auth = append(j.auth, r.Header.Get("Authorization"))
		status := j.status
		j.mu.Unlock()
		if status != 0 {
			w.WriteHeader(status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"code":200,"data":{"title":"Jina's Title","content":"Rendered by the reader.","url":"x"}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (j *jinaReader) seen() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.asked...)
}

// TestJinaReaderAndItsPrivacyRule: with useJinaReader a page is read
// through Jina, unless its URL, or any URL its redirects pass, carries
// credentials (userinfo, token or signature parameters): those pages are
// extracted here and Jina never hears of them. A failing reader falls
// back to local extraction; the fragment never leaves.
func TestJinaReaderAndItsPrivacyRule(t *testing.T) {
	jina := &jinaReader{}
	reader := jina.serve(t)
	srv := httptest.NewServer(fetchMux())
	t.Cleanup(srv.Close)
	env, r := builtinEnv(t, BuiltinOptions{DisableFiles: true, WebEnabled: true, SSRFWhitelist: []string{"127.0.0.1/32"},
		Web: WebOptions{UseJinaReader: true, JinaReaderEndpoint: reader.URL, FetchTimeout: 5 * time.Second,
			Getenv: func(k string) string { return map[string]string{"JINA_API_KEY": "jina-secret"}[k] }}})
	fetch := func(u string) Result {
		e := env
		e.SessionKey = "jina:" + u
		return call(t, r, e, "web_fetch", map[string]any{"url": u})
	}
	page := srv.URL + "/page"

	res := fetch(page + "#section-2")
	require.False(t, res.IsError, res.Text)
	require.Contains(t, res.Text, "(status 200, extractor jina)\n\n# Jina's Title\n\nRendered by the reader.")
	require.Equal(t, []string{page}, jina.seen(), "the fragment stays here")
	require.Equal(t, []string{"Bearer jina-secret"}, jina.auth, "JINA_API_KEY is sent when set")

	for _, u := range []string{
		page + "?token=abc123",
		page + "?X-Amz-Signature=deadbeef",
		page + "?file=report;sig=x",
		strings.Replace(page, "http://", "http://user:secret@", 1),
		srv.URL + "/to?u=" + "/page%3Faccess_token%3Dabc", // a redirect into a credential URL
		srv.URL + "/json",                                 // not a page: pretty-printed here
	} {
		res := fetch(u)
		require.False(t, res.IsError, res.Text)
		require.NotContains(t, res.Text, "extractor jina", u)
	}
	require.Equal(t, []string{page}, jina.seen(), "no credential-bearing URL reached the reader")

	jina.mu.Lock()
	jina.status = http.StatusTooManyRequests
	jina.mu.Unlock()
	res = fetch(page + "?v=2")
	require.False(t, res.IsError, res.Text)
	require.Contains(t, res.Text, "extractor readability", "a rate-limited reader falls back to local extraction")
	require.Contains(t, res.Text, "## Main Heading")
}

func TestURLCarriesCredentials(t *testing.T) {
	for _, u := range []string{
		"https://user:secret@example.com/report", "https://user@example.com/report",
		"https://example.com/download?token=abc123", "https://example.com/download?access_token=abc123",
		"https://example.com/doc?Signature=xyz&Expires=1700000000", "https://bucket.s3.amazonaws.com/key?X-Amz-Signature=deadbeef",
		"https://storage.googleapis.com/o/file?X-Goog-Signature=deadbeef", "https://example.com/blob?sig=sas-token-material",
		"https://maps.example.com/api?key=AIzaFixture", "https://example.com/callback?code=oauth-code",
		"https://example.com/download?API-KEY=secret", "https://example.com/download?file=report;token=secret",
	} {
		require.True(t, urlCarriesCredentials(u), u)
	}
	for _, u := range []string{
		"https://example.com/", "https://example.com/watch?v=abc123",
		"https://example.com/search?q=token+design&page=2", "https://example.com/page#section-3",
	} {
		require.False(t, urlCarriesCredentials(u), u)
	}
	require.Equal(t, "https://example.com:8443", urlOrigin("https://user:secret@example.com:8443/private/webhook-token?token=abc#secret"))
}
