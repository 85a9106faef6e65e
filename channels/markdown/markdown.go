// Package markdown reads the Markdown a model writes once, with goldmark
// (CommonMark plus GitHub's tables, strikethrough, task lists and bare
// links), and renders it for each platform nanobot talks to: Telegram's
// HTML, Slack's mrkdwn, Matrix's HTML, Discord's Markdown, Feishu's card
// elements, plain text and email. Split cuts a long text into messages
// without breaking a code block.
package markdown

import (
	"bufio"
	"bytes"
	"html"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	gparser "github.com/yuin/goldmark/parser"
	ghtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
)

// parser is shared: goldmark keeps each parse's state in its own context.
var parser gparser.Parser = goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser()

// parse normalises line ends, NUL and invalid UTF-8 (no platform takes them) and parses md.
func parse(md string) ([]byte, ast.Node) {
	md = strings.ReplaceAll(md, "\r\n", "\n")
	md = strings.ReplaceAll(md, "\r", "\n")
	md = strings.ReplaceAll(md, "\x00", "\uFFFD")
	src := []byte(strings.ToValidUTF8(md, "\uFFFD"))
	return src, parser.Parse(text.NewReader(src))
}

// literal resolves a text's escapes and entities as goldmark's HTML writer does, then unescapes.
func literal(raw []byte) string {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	ghtml.DefaultWriter.Write(w, raw)
	_ = w.Flush()
	return html.UnescapeString(buf.String())
}

// codeText is the content of a code span: its text as written, line ends as spaces.
func codeText(src []byte, n *ast.CodeSpan) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			v := t.Segment.Value(src)
			if bytes.HasSuffix(v, []byte("\n")) {
				v = append(v[:len(v)-1:len(v)-1], ' ')
			}
			b.Write(v)
		}
	}
	return b.String()
}

// blockText is the content of a code or HTML block, without its last line end.
func blockText(src []byte, n ast.Node) string {
	var b strings.Builder
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		b.Write(seg.Value(src))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// blankBefore reports a blank line above block n in the source: the renderers keep the break.
func blankBefore(src []byte, n ast.Node) bool {
	pos := n.Pos()
	if pos <= 0 || pos > len(src) {
		return false
	}
	start := bytes.LastIndexByte(src[:pos], '\n')
	if start < 0 {
		return false
	}
	prev := src[bytes.LastIndexByte(src[:start], '\n')+1 : start]
	return len(bytes.Trim(prev, " \t>")) == 0
}

// autoLink is an autolink's target, its text, and whether it was written <https://…>, not bare.
func autoLink(src []byte, n *ast.AutoLink) (url, label string, angle bool) {
	lb := n.Label(src)
	url, label = string(n.URL(src)), string(lb)
	if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(url), "mailto:") {
		url = "mailto:" + url
	}
	p := n.Pos()
	angle = p >= 0 && p+len(lb)+1 < len(src) && src[p] == '<' &&
		bytes.Equal(src[p+1:p+1+len(lb)], lb) && src[p+1+len(lb)] == '>'
	return url, label, angle
}

// rawHTML is inline HTML as written; every renderer shows it as text.
func rawHTML(src []byte, n *ast.RawHTML) string {
	var b strings.Builder
	for i := range n.Segments.Len() {
		seg := n.Segments.At(i)
		b.Write(seg.Value(src))
	}
	return b.String()
}

// safeURL admits only the given schemes: javascript:, data: or a relative path is shown as text.
func safeURL(u string, schemes ...string) bool {
	l := strings.ToLower(strings.TrimSpace(u))
	for _, s := range schemes {
		if strings.HasPrefix(l, s) && len(l) > len(s) && !strings.ContainsAny(u, "\x00\n") {
			return true
		}
	}
	return false
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
var attrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

// EscapeHTML makes text safe between tags of Telegram or Matrix HTML.
func EscapeHTML(s string) string { return htmlEscaper.Replace(s) }

func escapeAttr(s string) string { return attrEscaper.Replace(s) }

// langRe is a code block's language as a class name or fence may carry it.
var langRe = regexp.MustCompile(`^[A-Za-z0-9_+#.-]{1,32}$`)
