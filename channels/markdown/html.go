package markdown

import (
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// htmlFlavor writes inline HTML for htmlBlocks, linking only to schemes (else "label (url)").
func htmlFlavor(schemes ...string) *flavor { return htmlLinking("", schemes...) }

// htmlLinking is htmlFlavor with linkAttrs (` rel="…"`) written into each <a>.
func htmlLinking(linkAttrs string, schemes ...string) *flavor {
	link := func(label, url string) string {
		if !safeURL(url, schemes...) {
			return label + " (" + EscapeHTML(url) + ")"
		}
		if label == "" {
			label = EscapeHTML(url)
		}
		return `<a href="` + escapeAttr(url) + `"` + linkAttrs + `>` + label + "</a>"
	}
	return &flavor{
		text:      EscapeHTML,
		italic:    [2]string{"<em>", "</em>"},
		bold:      [2]string{"<strong>", "</strong>"},
		strike:    [2]string{"<del>", "</del>"},
		code:      func(s string) string { return "<code>" + EscapeHTML(s) + "</code>" },
		link:      link,
		image:     func(alt, url string) string { return link(EscapeHTML(alt), url) }, // no remote images: a link
		autolink:  func(url, label string, _ bool) string { return link(EscapeHTML(label), url) },
		html:      EscapeHTML,
		lineBreak: "<br>\n",
		softBreak: "<br>\n", // a model's line breaks are meant, as in a chat
	}
}

// renderHTML parses md and writes its blocks as HTML, inline content in f.
func renderHTML(md string, f *flavor) string {
	src, doc := parse(md)
	h := &htmlBlocks{l: newLayout(src, f)}
	h.blocks(doc)
	return strings.TrimSpace(h.b.String())
}

// htmlBlocks writes blocks in the tags Matrix takes, which email clients show too.
type htmlBlocks struct {
	l *layout
	b strings.Builder
}

func (h *htmlBlocks) blocks(parent ast.Node) {
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		h.block(n)
	}
}

func (h *htmlBlocks) block(n ast.Node) {
	l, b := h.l, &h.b
	switch n := n.(type) {
	case *ast.Paragraph:
		b.WriteString("<p>" + l.inlines(n) + "</p>\n")
	case *ast.TextBlock: // a tight list item's text
		b.WriteString(l.inlines(n))
		if n.NextSibling() != nil {
			b.WriteString("\n")
		}
	case *ast.Heading:
		tag := "h" + strconv.Itoa(n.Level)
		b.WriteString("<" + tag + ">" + l.inlines(n) + "</" + tag + ">\n")
	case *ast.ThematicBreak:
		b.WriteString("<hr>\n")
	case *ast.FencedCodeBlock:
		b.WriteString(htmlPre(string(n.Language(l.src)), blockText(l.src, n)))
	case *ast.CodeBlock:
		b.WriteString(htmlPre("", blockText(l.src, n)))
	case *ast.HTMLBlock:
		s := blockText(l.src, n)
		if n.HasClosure() {
			s += "\n" + strings.TrimSuffix(string(n.ClosureLine.Value(l.src)), "\n")
		}
		b.WriteString("<p>" + strings.ReplaceAll(EscapeHTML(s), "\n", "<br>\n") + "</p>\n")
	case *ast.Blockquote:
		b.WriteString("<blockquote>\n")
		h.blocks(n)
		b.WriteString("</blockquote>\n")
	case *ast.List:
		h.list(n)
	case *east.Table:
		h.table(newTable(n))
	default:
		h.blocks(n)
	}
}

func (h *htmlBlocks) list(n *ast.List) {
	b := &h.b
	switch {
	case !n.IsOrdered():
		b.WriteString("<ul>\n")
	case n.Start != 1:
		b.WriteString(`<ol start="` + strconv.Itoa(n.Start) + `">` + "\n")
	default:
		b.WriteString("<ol>\n")
	}
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		b.WriteString("<li>")
		if box := taskBox(item); box != nil {
			b.WriteString(boxTask("", box.IsChecked))
		}
		h.blocks(item)
		b.WriteString("</li>\n")
	}
	if n.IsOrdered() {
		b.WriteString("</ol>\n")
	} else {
		b.WriteString("</ul>\n")
	}
}

func (h *htmlBlocks) table(t *table) {
	b := &h.b
	row := func(cells []ast.Node, tag string) {
		b.WriteString("<tr>")
		for _, c := range cells {
			b.WriteString("<" + tag + ">" + h.l.inlines(c) + "</" + tag + ">")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("<table>\n<thead>\n")
	row(t.head, "th")
	b.WriteString("</thead>\n")
	if len(t.rows) > 0 {
		b.WriteString("<tbody>\n")
		for _, r := range t.rows {
			row(r, "td")
		}
		b.WriteString("</tbody>\n")
	}
	b.WriteString("</table>\n")
}

func htmlPre(lang, code string) string {
	open := "<pre><code>"
	if langRe.MatchString(lang) {
		open = `<pre><code class="language-` + lang + `">`
	}
	return open + EscapeHTML(code) + "</code></pre>\n"
}
