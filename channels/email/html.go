package email

import (
	"regexp"
	"strings"

	"golang.org/x/net/html"
)

// htmlToText reduces an HTML mail to the text a reader sees: scripts,
// styles and the head dropped, blocks and <br> as line breaks, list items
// as "- " lines, a link's address after its text.
func htmlToText(src string) string {
	z := html.NewTokenizer(strings.NewReader(src))
	var b strings.Builder
	skip := 0 // inside <script>, <style>, <head>, <title>
	var href []string
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return tidyText(b.String())
		case html.TextToken:
			if skip == 0 {
				b.WriteString(collapseSpace(string(z.Text())))
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			end := tt == html.EndTagToken
			switch tag {
			case "script", "style", "head", "title":
				if tt == html.StartTagToken {
					skip++
				} else if end && skip > 0 {
					skip--
				}
			case "br":
				b.WriteString("\n")
			case "p", "div", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "ul", "ol", "hr":
				b.WriteString("\n")
			case "li":
				if !end {
					b.WriteString("\n- ")
				}
			case "td", "th":
				if end {
					b.WriteString(" ")
				}
			case "a":
				if !end {
					href = append(href, attr(z, hasAttr, "href"))
				} else if n := len(href); n > 0 {
					if u := href[n-1]; strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
						b.WriteString(" (" + u + ")")
					}
					href = href[:n-1]
				}
			}
		}
	}
}

func attr(z *html.Tokenizer, more bool, key string) string {
	for more {
		var k, v []byte
		k, v, more = z.TagAttr()
		if string(k) == key {
			return string(v)
		}
	}
	return ""
}

var (
	spaceRun   = regexp.MustCompile(`[ \t\r\n\f\v\x{00a0}]+`)
	lineSpace  = regexp.MustCompile(`[ \t]*\n[ \t]*`)
	blankLines = regexp.MustCompile(`\n{3,}`)
)

// collapseSpace is HTML's whitespace rule: a run of it shows as one space.
func collapseSpace(s string) string { return spaceRun.ReplaceAllString(s, " ") }

// tidyText trims the spaces around line breaks and keeps at most one blank line.
func tidyText(s string) string {
	s = lineSpace.ReplaceAllString(s, "\n")
	return strings.TrimSpace(blankLines.ReplaceAllString(s, "\n\n"))
}
