package tools

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

const duckDuckGoSearchURL = "https://html.duckduckgo.com/html/"

func (t *WebSearchTool) searchDuckDuckGo(ctx context.Context, query string, _ int) ([]searchResult, *Result) {
	form := url.Values{"q": {query}, "b": {""}, "kl": {""}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint(duckDuckGoSearchURL), strings.NewReader(form.Encode()))
	if err != nil {
		res := ErrorResult("Error: invalid DuckDuckGo search URL: %v", err)
		return nil, &res
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", t.opts.UserAgent)
	req.Header.Set("Accept", "text/html")
	body, errRes := t.do(req, "DuckDuckGo")
	if errRes != nil {
		return nil, errRes
	}
	results, err := parseDuckDuckGo(string(body))
	if err != nil {
		res := ErrorResult("Error: DuckDuckGo search failed (%v)", err)
		return nil, &res
	}
	return results, nil
}

// parseDuckDuckGo reads results from DuckDuckGo's HTML page: each result
// has an <a class="result__a"> title link (a /l/?uddg= redirect carrying
// the target) and a "result__snippet" element; ads (inside a "result--ad"
// block) are skipped. It streams tokens, so a huge page costs linear time.
func parseDuckDuckGo(page string) ([]searchResult, error) {
	var out []searchResult
	z := html.NewTokenizer(strings.NewReader(page))
	divDepth, adDepth := 0, 0 // adDepth: divDepth of the open ad block, 0 = none
	var capture *ddgCapture
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if err := z.Err(); err != io.EOF {
				return nil, err
			}
			return out, nil
		case html.TextToken:
			if capture != nil {
				capture.text.Write(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			if capture != nil {
				if tok.Data == capture.tag && tt == html.StartTagToken {
					capture.depth++
				}
				continue
			}
			if tok.DataAtom == atom.Div && tt == html.StartTagToken {
				divDepth++
			}
			classes := strings.Fields(tokAttr(tok, "class"))
			switch {
			case hasClass(classes, "result--ad"):
				if adDepth == 0 && tok.DataAtom == atom.Div {
					adDepth = divDepth
				}
			case adDepth > 0 || tt == html.SelfClosingTagToken:
			case hasClass(classes, "result__a"):
				if target := ddgTarget(tokAttr(tok, "href")); target != "" {
					capture = &ddgCapture{tag: tok.Data, depth: 1, title: true, url: target}
				}
			case hasClass(classes, "result__snippet"):
				if len(out) > 0 && out[len(out)-1].snippet == "" {
					capture = &ddgCapture{tag: tok.Data, depth: 1}
				}
			}
		case html.EndTagToken:
			tok := z.Token()
			if capture != nil {
				if tok.Data == capture.tag {
					if capture.depth--; capture.depth == 0 {
						if capture.title {
							out = append(out, searchResult{title: capture.text.String(), url: capture.url})
						} else {
							out[len(out)-1].snippet = capture.text.String()
						}
						capture = nil
					}
				}
				continue
			}
			if tok.DataAtom == atom.Div && divDepth > 0 {
				if divDepth == adDepth {
					adDepth = 0
				}
				divDepth--
			}
		}
	}
}

// ddgCapture collects the text of one title link or snippet element.
type ddgCapture struct {
	tag   string
	depth int
	title bool
	url   string
	text  strings.Builder
}

func hasClass(classes []string, want string) bool {
	for _, c := range classes {
		if c == want {
			return true
		}
	}
	return false
}

// ddgTarget unwraps DuckDuckGo's //duckduckgo.com/l/?uddg=<target> links;
// ad redirects (y.js) yield "".
func ddgTarget(href string) string {
	href = strings.TrimSpace(href)
	if strings.HasPrefix(href, "//") {
		href = "https:" + href
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if strings.HasSuffix(u.Hostname(), "duckduckgo.com") || u.Host == "" {
		if target := u.Query().Get("uddg"); target != "" {
			return target
		}
		return ""
	}
	return href
}
