package markdown

import (
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// FeishuCard lays Markdown out as the elements of a Feishu interactive
// card (nanobot's card format): a heading as a bold "div", a table as a
// "table" element with plain cells, a rule as "hr", and the blocks between
// as "markdown" elements in the Markdown Feishu's cards read — bold,
// italics, strikethrough, code, code blocks, links, lists, quotes; an
// image becomes a link (a card shows only images uploaded to Feishu).
// Past maxTables tables (-1: no limit) a table is aligned text in a code
// block: Feishu takes one table a card.
func FeishuCard(md string, maxTables int) []map[string]any {
	src, doc := parse(md)
	l := newLayout(src, feishuFlavor)
	var els []map[string]any
	var run strings.Builder
	flush := func() {
		if s := strings.TrimSpace(run.String()); s != "" {
			els = append(els, map[string]any{"tag": "markdown", "content": s})
		}
		run.Reset()
	}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		switch n := n.(type) {
		case *ast.Heading:
			flush()
			if text := strings.TrimSpace(strings.ReplaceAll(l.plain(n), "\n", " ")); text != "" {
				els = append(els, map[string]any{"tag": "div", "text": map[string]any{"tag": "lark_md", "content": "**" + text + "**"}})
			}
			continue
		case *ast.ThematicBreak:
			flush()
			els = append(els, map[string]any{"tag": "hr"})
			continue
		case *east.Table:
			if maxTables != 0 {
				flush()
				maxTables--
				els = append(els, feishuTable(l, newTable(n)))
				continue
			}
		}
		s := l.block(n)
		if s == "" {
			continue
		}
		if run.Len() > 0 {
			run.WriteString("\n")
			if blankBefore(src, n) {
				run.WriteString("\n")
			}
		}
		run.WriteString(s)
	}
	flush()
	if len(els) == 0 {
		return []map[string]any{{"tag": "markdown", "content": strings.TrimSpace(md)}}
	}
	return els
}

// feishuTable is a card's table: columns c0, c1, … named by the header,
// cells as plain text (a card's table shows no Markdown).
func feishuTable(l *layout, t *table) map[string]any {
	columns := make([]map[string]any, len(t.head))
	for i, h := range t.head {
		columns[i] = map[string]any{"tag": "column", "name": "c" + strconv.Itoa(i), "display_name": l.plain(h), "width": "auto"}
	}
	rows := make([]map[string]any, 0, len(t.rows))
	for _, cells := range t.rows {
		row := map[string]any{}
		for i := range t.head {
			v := ""
			if i < len(cells) {
				v = l.plain(cells[i])
			}
			row["c"+strconv.Itoa(i)] = v
		}
		rows = append(rows, row)
	}
	return map[string]any{"tag": "table", "page_size": len(rows) + 1, "columns": columns, "rows": rows}
}

// feishuFlavor is the Markdown of a card's markdown element: Discord's
// (text as written, CommonMark's marks and fences, tables as code) but for
// links only to the web, headings as bold lines and drawn task boxes.
var feishuFlavor = func() *flavor {
	f := *discordFlavor
	f.link = feishuLink
	f.image = func(alt, url string) string { return feishuLink(discordBrackets.Replace(alt), url) }
	f.autolink = func(url, label string, _ bool) string { return feishuLink(label, url) }
	f.heading = func(_ int, inner string) string { return "**" + inner + "**" }
	f.task = boxTask
	return &f
}()

func feishuLink(label, url string) string {
	if !safeURL(url, "https://", "http://") {
		return plainLink(label, url)
	}
	if label == "" {
		label = url
	}
	return "[" + label + "](" + url + ")"
}
