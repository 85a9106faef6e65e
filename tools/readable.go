package tools

import (
	"bytes"
	"io"
	"net/url"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
)

// readabilityMaxElements bounds the pages readability parses into a tree;
// a larger (or hostile, deeply nested) page is rendered whole by the
// streaming renderer instead, which stays linear.
const readabilityMaxElements = 60_000

// htmlToText turns an HTML page into readable text, as nanobot's web_fetch
// does with readability: the article is found by go-readability (Mozilla's
// Readability.js in Go: clutter, navigation and hidden parts removed,
// relative links made absolute), then rendered as markdown or text. The
// title, if any, heads the text as "# title". A page readability cannot
// reduce is rendered whole, without its chrome. extractor names the path
// taken, as nanobot reports it: "readability" or "html".
func htmlToText(r io.Reader, base *url.URL, markdown bool) (text, extractor string, err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return "", "", err
	}
	title, text, err := readableArticle(data, base, markdown)
	extractor = "readability"
	if err != nil || text == "" {
		if title, text, err = renderHTML(data, base, markdown, true); err != nil {
			return "", "", err
		}
		extractor = "html"
	}
	if title != "" && !strings.HasPrefix(text, "# "+title) {
		text = strings.TrimSpace("# " + title + "\n\n" + text)
	}
	return text, extractor, nil
}

// readableArticle is readability's article of the page, rendered; "" when
// the page is too large for it or it finds nothing.
func readableArticle(data []byte, base *url.URL, markdown bool) (title, text string, err error) {
	if countElements(data) > readabilityMaxElements {
		return "", "", nil
	}
	article, err := readability.FromReader(bytes.NewReader(data), base)
	if err != nil || article.Node == nil {
		return "", "", err
	}
	var buf bytes.Buffer
	if err := html.Render(&buf, article.Node); err != nil {
		return "", "", err
	}
	_, text, err = renderHTML(buf.Bytes(), base, markdown, false)
	return strings.TrimSpace(spaceRun.ReplaceAllString(article.Title(), " ")), text, err
}

// countElements counts start tags, stopping once past the readability bound.
func countElements(data []byte) int {
	z := html.NewTokenizer(bytes.NewReader(data))
	n := 0
	for n <= readabilityMaxElements {
		switch z.Next() {
		case html.ErrorToken:
			return n
		case html.StartTagToken, html.SelfClosingTagToken:
			n++
		}
	}
	return n
}
