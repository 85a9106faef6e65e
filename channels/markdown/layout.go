package markdown

import (
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// flavor is how one text platform writes each construct; layout's walk is shared.
type flavor struct {
	// text escapes literal text; nil keeps the source's escapes, for Discord to read.
	text func(s string) string
	// italic, bold and strike are the marks around emphasised text.
	italic, bold, strike [2]string
	code                 func(s string) string
	// link gets its label rendered and its destination as written.
	link     func(label, url string) string
	image    func(alt, url string) string
	autolink func(url, label string, angle bool) string
	// html shows raw HTML, inline or a block's lines.
	html func(s string) string
	// lineBreak and softBreak stand for a hard and a plain line end ("\n" if empty).
	lineBreak, softBreak string
	heading              func(level int, inner string) string
	// boldHeading renders a heading's text as inside bold, for platforms that cannot nest it.
	boldHeading bool
	fence       func(lang, code string) string
	// quote wraps a quote's body; depth 1 is outermost, inList follows a list marker.
	quote  func(body string, depth int, inList bool) string
	rule   string
	table  func(l *layout, t *table) string
	bullet func(depth int) string
	number func(n int) string
	// task is a task item's marker, given the list's marker.
	task func(marker string, checked bool) string
}

// derive is base with change made: a flavor that differs from another in a few marks.
func derive(base *flavor, change func(*flavor)) *flavor {
	f := *base
	change(&f)
	return &f
}

// layout renders a tree for one flavor.
type layout struct {
	f   *flavor
	src []byte
	// open marks are not opened again inside themselves: Slack's *a *b* c* would not parse.
	open       map[*[2]string]bool
	listDepth  int
	quoteDepth int
	// plainF is plainFlavor, held here: read from plain it would make an init cycle.
	plainF *flavor
}

func newLayout(src []byte, f *flavor) *layout {
	return &layout{f: f, src: src, open: map[*[2]string]bool{}, plainF: plainFlavor}
}

// render parses md and lays it out in f.
func render(md string, f *flavor) string {
	src, doc := parse(md)
	l := newLayout(src, f)
	return strings.TrimRight(l.blocks(doc), " \n")
}

// blocks renders blocks one a line, a blank line between two where the source has one.
func (l *layout) blocks(parent ast.Node) string {
	var b strings.Builder
	for n := parent.FirstChild(); n != nil; n = n.NextSibling() {
		s := l.block(n)
		if s == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
			if blankBefore(l.src, n) {
				b.WriteString("\n")
			}
		}
		b.WriteString(s)
	}
	return b.String()
}

func (l *layout) block(n ast.Node) string {
	f := l.f
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return l.inlines(n)
	case *ast.Heading:
		inner := l.within(&f.bold, f.boldHeading, func() string { return l.inlines(n) })
		if strings.TrimSpace(inner) == "" {
			return ""
		}
		return f.heading(n.Level, inner)
	case *ast.ThematicBreak:
		return f.rule
	case *ast.FencedCodeBlock:
		return f.fence(string(n.Language(l.src)), blockText(l.src, n))
	case *ast.CodeBlock:
		return f.fence("", blockText(l.src, n))
	case *ast.HTMLBlock:
		s := blockText(l.src, n)
		if n.HasClosure() {
			s = strings.TrimSuffix(s+"\n"+string(n.ClosureLine.Value(l.src)), "\n")
		}
		return f.html(s)
	case *ast.Blockquote:
		l.quoteDepth++
		body := l.blocks(n)
		l.quoteDepth--
		return f.quote(body, l.quoteDepth+1, l.listDepth > 0)
	case *ast.List:
		return l.list(n)
	case *east.Table:
		return f.table(l, newTable(n))
	}
	return l.blocks(n)
}

// list renders items one a line, continuation lines indented under the item's text.
func (l *layout) list(n *ast.List) string {
	var b strings.Builder
	num := n.Start
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		marker := l.f.bullet(l.listDepth)
		if n.IsOrdered() {
			marker = l.f.number(num)
			num++
		}
		if box := taskBox(item); box != nil {
			marker = l.f.task(marker, box.IsChecked)
		}
		l.listDepth++
		body := l.blocks(item)
		l.listDepth--
		if b.Len() > 0 {
			b.WriteString("\n")
			if blankBefore(l.src, item) {
				b.WriteString("\n")
			}
		}
		indent := strings.Repeat(" ", utf8.RuneCountInString(marker))
		b.WriteString(marker + strings.ReplaceAll(body, "\n", "\n"+indent))
	}
	return trimLineEnds(b.String())
}

// taskBox is the check box that opens a task list item, if it is one.
func taskBox(item ast.Node) *east.TaskCheckBox {
	if first := item.FirstChild(); first != nil {
		if box, ok := first.FirstChild().(*east.TaskCheckBox); ok {
			return box
		}
	}
	return nil
}

// inlines renders the inline children of n.
func (l *layout) inlines(n ast.Node) string {
	var b strings.Builder
	var run []byte // a line's adjacent text, escaped at once so a token split over two nodes is seen whole
	flush := func() {
		if len(run) > 0 {
			b.WriteString(l.text(run))
			run = run[:0]
		}
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		t, ok := c.(*ast.Text)
		if !ok {
			flush()
			b.WriteString(l.inline(c))
			continue
		}
		run = append(run, t.Segment.Value(l.src)...)
		switch {
		case t.HardLineBreak():
			flush()
			b.WriteString(orNewline(l.f.lineBreak))
		case t.SoftLineBreak():
			flush()
			b.WriteString(orNewline(l.f.softBreak))
		}
	}
	flush()
	return b.String()
}

// text renders source text: resolved and escaped, or as written.
func (l *layout) text(raw []byte) string {
	if l.f.text == nil {
		return string(raw)
	}
	return l.f.text(literal(raw))
}

func orNewline(s string) string {
	if s == "" {
		return "\n"
	}
	return s
}

func (l *layout) inline(n ast.Node) string {
	f := l.f
	switch n := n.(type) {
	case *ast.Emphasis:
		if n.Level >= 2 {
			return l.mark(&f.bold, n)
		}
		return l.mark(&f.italic, n)
	case *east.Strikethrough:
		return l.mark(&f.strike, n)
	case *ast.CodeSpan:
		return f.code(codeText(l.src, n))
	case *ast.Link:
		return f.link(l.inlines(n), string(n.Destination))
	case *ast.Image:
		return f.image(l.plain(n), string(n.Destination))
	case *ast.AutoLink:
		return f.autolink(autoLink(l.src, n))
	case *ast.RawHTML:
		return f.html(rawHTML(l.src, n))
	case *ast.String:
		return l.text(n.Value)
	case *east.TaskCheckBox:
		return "" // drawn by list as the item's marker
	}
	return l.inlines(n)
}

// mark wraps n's text in m unless m is open already.
func (l *layout) mark(m *[2]string, n ast.Node) string {
	if l.open[m] {
		return l.inlines(n)
	}
	return m[0] + l.within(m, true, func() string { return l.inlines(n) }) + m[1]
}

// within runs fn with mark m open when on is set.
func (l *layout) within(m *[2]string, on bool, fn func() string) string {
	if !on || l.open[m] {
		return fn()
	}
	l.open[m] = true
	defer delete(l.open, m)
	return fn()
}

// plain is n's inline content as plain text, for an image's alt or a table cell.
func (l *layout) plain(n ast.Node) string {
	p := &layout{f: l.plainF, src: l.src, open: map[*[2]string]bool{}, plainF: l.plainF}
	return p.inlines(n)
}

// trimLineEnds drops the spaces an indent left on blank lines.
func trimLineEnds(s string) string {
	if !strings.Contains(s, " \n") && !strings.HasSuffix(s, " ") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		lines[i] = strings.TrimRight(line, " ")
	}
	return strings.Join(lines, "\n")
}

// prefixLines puts p before every line of s, and trims what that leaves at line ends.
func prefixLines(s, p string) string {
	return trimLineEnds(p + strings.ReplaceAll(s, "\n", "\n"+p))
}
