package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// The providers' endpoints (nanobot's); WebOptions.SearchEndpoint replaces them.
const (
	braveSearchURL  = "https://api.search.brave.com/res/v1/web/search"
	tavilySearchURL = "https://api.tavily.com/search"
	jinaSearchURL   = "https://s.jina.ai"
	exaSearchURL    = "https://api.exa.ai/search"
	bochaSearchURL  = "https://api.bochaai.com/v1/web-search"
	// snippetChars bounds Jina's and Exa's page text used as a snippet, as nanobot does.
	snippetChars = 500
)

// request builds a search request: JSON when body is not nil.
func (t *WebSearchTool) request(ctx context.Context, method, target string, body any, headers map[string]string) (*http.Request, *Result) {
	var payload io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			res := ErrorResult("Error: %v", err)
			return nil, &res
		}
		payload = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, payload)
	if err != nil {
		res := ErrorResult("Error: invalid search URL %s: %v", target, err)
		return nil, &res
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", t.opts.UserAgent)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req, nil
}

// fetchJSON sends req and decodes a 2xx JSON answer into into.
func (t *WebSearchTool) fetchJSON(req *http.Request, label string, into any) *Result {
	body, errRes := t.do(req, label)
	if errRes != nil {
		return errRes
	}
	if err := json.Unmarshal(body, into); err != nil {
		res := ErrorResult("Error: %s search returned an unreadable response: %v", label, err)
		return &res
	}
	return nil
}

func (t *WebSearchTool) searchBrave(ctx context.Context, query string, n int) ([]searchResult, *Result) {
	u, err := url.Parse(t.endpoint(braveSearchURL))
	if err != nil {
		res := ErrorResult("Error: invalid Brave search URL: %v", err)
		return nil, &res
	}
	q := u.Query()
	q.Set("q", query)
	q.Set("count", fmt.Sprint(n))
	u.RawQuery = q.Encode()
	req, errRes := t.request(ctx, http.MethodGet, u.String(), nil, map[string]string{"Accept": "application/json", "X-Subscription-Token": t.choice.Credential})
	if errRes != nil {
		return nil, errRes
	}
	var payload struct {
		Web struct {
			Results []struct{ Title, URL, Description string } `json:"results"`
		} `json:"web"`
	}
	if errRes := t.fetchJSON(req, "Brave", &payload); errRes != nil {
		return nil, errRes
	}
	out := make([]searchResult, 0, len(payload.Web.Results))
	for _, r := range payload.Web.Results {
		out = append(out, searchResult{title: r.Title, url: r.URL, snippet: r.Description})
	}
	return out, nil
}

// titledResults is the {title, url, content} list Tavily and SearXNG answer with.
type titledResults struct {
	Results []struct{ Title, URL, Content string } `json:"results"`
}

func (r titledResults) results() []searchResult {
	out := make([]searchResult, 0, len(r.Results))
	for _, x := range r.Results {
		out = append(out, searchResult{title: x.Title, url: x.URL, snippet: x.Content})
	}
	return out
}

func (t *WebSearchTool) searchTavily(ctx context.Context, query string, n int) ([]searchResult, *Result) {
	req, errRes := t.request(ctx, http.MethodPost, t.endpoint(tavilySearchURL),
		map[string]any{"query": query, "max_results": n}, map[string]string{"Authorization": "Bearer " + t.choice.Credential})
	if errRes != nil {
		return nil, errRes
	}
	var payload titledResults
	if errRes := t.fetchJSON(req, "Tavily", &payload); errRes != nil {
		return nil, errRes
	}
	return payload.results(), nil
}

// searchSearXNG asks the instance at tools.web.search.baseUrl (or
// SEARXNG_BASE_URL) for its JSON results.
func (t *WebSearchTool) searchSearXNG(ctx context.Context, query string, _ int) ([]searchResult, *Result) {
	endpoint := strings.TrimRight(t.choice.Credential, "/") + "/search"
	if _, err := checkURLShape(endpoint); err != nil {
		res := ErrorResult("Error: invalid SearXNG URL: %v", err)
		return nil, &res
	}
	u, _ := url.Parse(endpoint)
	q := u.Query()
	q.Set("q", query)
	q.Set("format", "json")
	u.RawQuery = q.Encode()
	req, errRes := t.request(ctx, http.MethodGet, u.String(), nil, nil)
	if errRes != nil {
		return nil, errRes
	}
	var payload titledResults
	if errRes := t.fetchJSON(req, "SearXNG", &payload); errRes != nil {
		return nil, errRes
	}
	return payload.results(), nil
}

func (t *WebSearchTool) searchJina(ctx context.Context, query string, n int) ([]searchResult, *Result) {
	target := strings.TrimRight(t.endpoint(jinaSearchURL), "/") + "/" + url.PathEscape(query)
	req, errRes := t.request(ctx, http.MethodGet, target, nil, map[string]string{"Accept": "application/json", "Authorization": "Bearer " + t.choice.Credential})
	if errRes != nil {
		return nil, errRes
	}
	var payload struct {
		Data []struct{ Title, URL, Content string } `json:"data"`
	}
	if errRes := t.fetchJSON(req, "Jina", &payload); errRes != nil {
		return nil, errRes
	}
	out := make([]searchResult, 0, len(payload.Data))
	for _, d := range payload.Data[:min(n, len(payload.Data))] {
		out = append(out, searchResult{title: d.Title, url: d.URL, snippet: truncateRunes(d.Content, snippetChars)})
	}
	return out, nil
}

func (t *WebSearchTool) searchExa(ctx context.Context, query string, n int) ([]searchResult, *Result) {
	req, errRes := t.request(ctx, http.MethodPost, t.endpoint(exaSearchURL),
		map[string]any{"query": query, "numResults": n, "contents": map[string]any{"highlights": true}},
		map[string]string{"x-api-key": t.choice.Credential})
	if errRes != nil {
		return nil, errRes
	}
	var payload struct {
		Results []struct {
			Title, URL, Summary, Text string
			Highlights                []string `json:"highlights"`
		} `json:"results"`
	}
	if errRes := t.fetchJSON(req, "Exa", &payload); errRes != nil {
		return nil, errRes
	}
	out := make([]searchResult, 0, len(payload.Results))
	for _, r := range payload.Results {
		snippet := strings.Join(nonEmpty(r.Highlights), "\n")
		if snippet == "" {
			snippet = r.Summary
			if snippet == "" {
				snippet = r.Text
			}
			snippet = truncateRunes(snippet, snippetChars)
		}
		out = append(out, searchResult{title: r.Title, url: r.URL, snippet: snippet})
	}
	return out, nil
}

func (t *WebSearchTool) searchBocha(ctx context.Context, query string, n int) ([]searchResult, *Result) {
	req, errRes := t.request(ctx, http.MethodPost, t.endpoint(bochaSearchURL),
		map[string]any{"query": query, "freshness": "noLimit", "summary": true, "count": n},
		map[string]string{"Authorization": "Bearer " + t.choice.Credential})
	if errRes != nil {
		return nil, errRes
	}
	type webPages struct {
		Value []struct{ Name, URL, Summary, Snippet string } `json:"value"`
	}
	// Bocha wraps its answer in {"code", "data": {...}}; older answers are bare.
	var payload struct {
		Data *struct {
			WebPages webPages `json:"webPages"`
		} `json:"data"`
		WebPages webPages `json:"webPages"`
	}
	if errRes := t.fetchJSON(req, "Bocha", &payload); errRes != nil {
		return nil, errRes
	}
	pages := payload.WebPages
	if payload.Data != nil {
		pages = payload.Data.WebPages
	}
	out := make([]searchResult, 0, len(pages.Value))
	for _, p := range pages.Value {
		snippet := p.Summary
		if snippet == "" {
			snippet = p.Snippet
		}
		out = append(out, searchResult{title: p.Name, url: p.URL, snippet: snippet})
	}
	return out, nil
}

func nonEmpty(items []string) []string {
	out := items[:0:0]
	for _, s := range items {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}
