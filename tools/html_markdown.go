package tools

import (
	"bytes"
	"io"
	"net/url"
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlNeverText are elements whose content is never readable page text.
var htmlNeverText = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Svg: true, atom.Iframe: true, atom.Button: true,
	atom.Select: true, atom.Canvas: true, atom.Object: true, atom.Dialog: true,
}

// htmlChrome is page furniture around the content.
var htmlChrome = map[atom.Atom]bool{atom.Nav: true, atom.Footer: true, atom.Aside: true, atom.Form: true}

// htmlBlocks start and end on their own line.
var htmlBlocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true,
	atom.Header: true, atom.Blockquote: true, atom.Table: true, atom.Ul: true, atom.Ol: true,
	atom.Dl: true, atom.Dt: true, atom.Dd: true, atom.Figure: true, atom.Figcaption: true,
	atom.Address: true, atom.Details: true, atom.Summary: true, atom.Body: true,
}

var (
	spaceRun     = regexp.MustCompile(`[ \t\r\n\f\v\x{00a0}]+`)
	blankLineRun = regexp.MustCompile(`\n{3,}`)
)

// renderHTML renders an HTML document or fragment as text: scripts, styles
// and hidden elements are dropped; headings, lists, paragraphs, tables and
// code blocks keep their shape. In markdown mode headings become "#", links
// "[text](absolute URL)", bold "**" and code is fenced. chrome also drops
// page furniture (nav, footer, aside, forms), for a page readability could
// not reduce to its article. It streams tokens: work stays linear and the
// stack flat however deeply a page nests tags.
func renderHTML(data []byte, base *url.URL, markdown, chrome bool) (title, text string, err error) {
	w := &textWriter{markdown: markdown, base: base}
	var titleBuf strings.Builder
	inTitle, titleDone := false, false
	var skipTag atom.Atom
	skipDepth := 0
	z := html.NewTokenizer(bytes.NewReader(data))
loop:
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				return "", "", z.Err()
			}
			break loop
		case html.TextToken:
			switch {
			case inTitle:
				titleBuf.Write(z.Text())
			case skipDepth == 0:
				w.text(string(z.Text()))
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			a, selfClosing := tok.DataAtom, tt == html.SelfClosingTagToken
			if a == atom.Title && !titleDone && !selfClosing {
				inTitle = true
				continue
			}
			if skipDepth > 0 {
				if a == skipTag && !selfClosing {
					skipDepth++
				}
				continue
			}
			if htmlNeverText[a] || chrome && htmlChrome[a] || tokHasAttr(tok, "hidden") || tokAttr(tok, "aria-hidden") == "true" {
				if !selfClosing && !isVoid(a) {
					skipTag, skipDepth = a, 1
				}
				continue
			}
			w.start(tok, a)
		case html.EndTagToken:
			a := z.Token().DataAtom
			switch {
			case inTitle && a == atom.Title:
				inTitle, titleDone = false, true
			case skipDepth > 0:
				if a == skipTag {
					skipDepth--
				}
			default:
				w.end(a)
			}
		}
	}
	title = strings.TrimSpace(spaceRun.ReplaceAllString(titleBuf.String(), " "))
	lines := strings.Split(string(w.buf), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	text = strings.TrimSpace(blankLineRun.ReplaceAllString(strings.Join(lines, "\n"), "\n\n"))
	return title, text, nil
}

// textWriter renders tokens into buf, tracking line starts so that
// whitespace collapses the way a browser would show it.
type textWriter struct {
	buf          []byte
	markdown     bool
	base         *url.URL
	pre          int
	code, strong int        // open inline markers written
	links        []openLink // open <a> elements
}

type openLink struct {
	start int
	href  string
}

// newlines ends the current line and adds blank lines up to n newlines.
func (w *textWriter) newlines(n int) {
	if len(w.buf) == 0 {
		return
	}
	have := 0
	for i := len(w.buf) - 1; i >= 0 && w.buf[i] == '\n'; i-- {
		have++
	}
	for ; have < n; have++ {
		w.buf = append(w.buf, '\n')
	}
}

func (w *textWriter) atLineStart() bool {
	return len(w.buf) == 0 || w.buf[len(w.buf)-1] == '\n'
}

func (w *textWriter) write(s string) { w.buf = append(w.buf, s...) }

// text writes character data, collapsing whitespace outside <pre>.
func (w *textWriter) text(s string) {
	if w.pre > 0 {
		w.write(s)
		return
	}
	s = spaceRun.ReplaceAllString(s, " ")
	if s == " " || s == "" {
		if !w.atLineStart() && w.buf[len(w.buf)-1] != ' ' {
			w.write(" ")
		}
		return
	}
	if strings.HasPrefix(s, " ") && (w.atLineStart() || w.buf[len(w.buf)-1] == ' ') {
		s = s[1:]
	}
	w.write(s)
}

func (w *textWriter) start(tok html.Token, a atom.Atom) {
	switch {
	case headingLevel(a) > 0:
		w.newlines(2)
		if w.markdown {
			w.write(strings.Repeat("#", headingLevel(a)) + " ")
		}
	case a == atom.Li:
		w.newlines(1)
		w.write("- ")
	case a == atom.Br:
		w.write("\n")
	case a == atom.Hr:
		w.newlines(2)
	case a == atom.Pre:
		w.newlines(2)
		if w.markdown {
			w.write("```\n")
		}
		w.pre++
	case a == atom.Code && w.pre == 0 && w.markdown:
		w.write("`")
		w.code++
	case (a == atom.Strong || a == atom.B) && w.markdown:
		w.write("**")
		w.strong++
	case a == atom.A:
		w.links = append(w.links, openLink{start: len(w.buf), href: strings.TrimSpace(tokAttr(tok, "href"))})
	case a == atom.Tr:
		w.newlines(1)
	case a == atom.Td || a == atom.Th:
		if !w.atLineStart() {
			w.write(" | ")
		}
	case htmlBlocks[a]:
		w.newlines(2)
	}
}

func (w *textWriter) end(a atom.Atom) {
	switch {
	case headingLevel(a) > 0:
		w.newlines(2)
	case a == atom.Li || a == atom.Tr:
		w.newlines(1)
	case a == atom.Pre && w.pre > 0:
		w.pre--
		if w.markdown {
			w.newlines(1)
			w.write("```")
		}
		w.newlines(2)
	case a == atom.Code && w.code > 0:
		w.write("`")
		w.code--
	case (a == atom.Strong || a == atom.B) && w.strong > 0:
		w.write("**")
		w.strong--
	case a == atom.A && len(w.links) > 0:
		l := w.links[len(w.links)-1]
		w.links = w.links[:len(w.links)-1]
		w.link(l)
	case htmlBlocks[a]:
		w.newlines(2)
	}
}

// link rewrites an anchor's text as [text](absolute URL) in markdown mode.
func (w *textWriter) link(l openLink) {
	if !w.markdown || l.start > len(w.buf) {
		return
	}
	label := strings.TrimSpace(string(w.buf[l.start:]))
	href := l.href
	if label == "" || href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:") {
		return
	}
	if u, err := url.Parse(href); err == nil && w.base != nil {
		href = w.base.ResolveReference(u).String()
	}
	lead := ""
	if l.start < len(w.buf) && w.buf[l.start] == ' ' {
		lead = " "
	}
	w.buf = append(w.buf[:l.start], (lead + "[" + label + "](" + href + ")")...)
}

func headingLevel(a atom.Atom) int {
	switch a {
	case atom.H1:
		return 1
	case atom.H2:
		return 2
	case atom.H3:
		return 3
	case atom.H4:
		return 4
	case atom.H5:
		return 5
	case atom.H6:
		return 6
	}
	return 0
}

// isVoid reports elements that never have an end tag.
func isVoid(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}

func tokAttr(tok html.Token, key string) string {
	for _, a := range tok.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func tokHasAttr(tok html.Token, key string) bool {
	for _, a := range tok.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// stripTags removes markup from a fragment (search titles and snippets
// carry <strong>/<b>) and unescapes entities, collapsing whitespace.
func stripTags(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return strings.TrimSpace(spaceRun.ReplaceAllString(s, " "))
	}
	var sb strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.TrimSpace(spaceRun.ReplaceAllString(sb.String(), " "))
		case html.TextToken:
			sb.Write(z.Text())
		}
	}
}
