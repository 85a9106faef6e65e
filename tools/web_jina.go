package tools

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const (
	jinaReaderURL     = "https://r.jina.ai"
	jinaReaderTimeout = 20 * time.Second
)

// readWithJina reads a page through Jina's reader, as nanobot's web_fetch
// does when tools.web.fetch.useJinaReader is on: "# title" and the page's
// text go into text. Any failure (rate limit, error, empty page) returns
// false and the page is extracted locally instead. The caller has checked
// that no URL of the redirect chain carries credentials.
func (t *WebFetchTool) readWithJina(ctx context.Context, raw string, text *string) bool {
	forwarded, _, _ := strings.Cut(raw, "#") // client-side data (OAuth implicit tokens) stays here
	endpoint := jinaReaderURL
	if t.opts.JinaReaderEndpoint != "" {
		endpoint = t.opts.JinaReaderEndpoint
	}
	ctx, cancel := context.WithTimeout(ctx, jinaReaderTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(endpoint, "/")+"/"+forwarded, nil)
	if err != nil {
		return false
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", t.opts.UserAgent)
	if key := t.opts.getenv("JINA_API_KEY"); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	client := &http.Client{Transport: t.opts.transport()}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		slog.Debug("web_fetch: Jina reader failed; extracting locally", "origin", urlOrigin(raw), "error", err)
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		slog.Debug("web_fetch: Jina reader refused; extracting locally", "origin", urlOrigin(raw), "status", resp.StatusCode)
		return false
	}
	var payload struct {
		Data struct{ Title, Content string } `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, webMaxBodyBytes)).Decode(&payload); err != nil || strings.TrimSpace(payload.Data.Content) == "" {
		return false
	}
	*text = payload.Data.Content
	if payload.Data.Title != "" {
		*text = "# " + payload.Data.Title + "\n\n" + payload.Data.Content
	}
	return true
}

// credentialParams are query parameter names that mark a URL as carrying
// credential material (nanobot's list): such a URL never goes to Jina.
// Over-matching only costs the local extractor; under-matching leaks a secret.
var credentialParams = map[string]bool{
	"access_token": true, "api-key": true, "api-token": true, "apikey": true, "api_key": true, "api_token": true,
	"auth": true, "authorization": true, "client_assertion": true, "client_secret": true, "code": true,
	"credential": true, "credentials": true, "id_token": true, "jwt": true, "key": true, "password": true,
	"passwd": true, "private_key": true, "pwd": true, "refresh_token": true, "samlresponse": true, "secret": true,
	"session_id": true, "session_token": true, "sessionid": true, "sig": true, "signature": true, "sso_token": true,
	"ticket": true, "token": true,
}

// urlCarriesCredentials reports userinfo or a credential-looking query
// parameter (";" counts as a separator, as some frameworks take it).
func urlCarriesCredentials(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return true
	}
	if u.User != nil {
		return true
	}
	for _, pair := range strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		name, _, _ := strings.Cut(pair, "=")
		if decoded, err := url.QueryUnescape(name); err == nil {
			name = decoded
		}
		name = strings.ToLower(strings.TrimSpace(name))
		if credentialParams[name] || strings.HasPrefix(name, "x-amz-") || strings.HasPrefix(name, "x-goog-") {
			return true
		}
	}
	return false
}

// urlOrigin is scheme://host[:port] of a URL, for logs: no userinfo, path or query.
func urlOrigin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "<redacted URL>"
	}
	return u.Scheme + "://" + u.Host
}
