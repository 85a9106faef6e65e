package markdown

import (
	"strconv"
	"strings"
)

// PlainText renders Markdown as readable plain text: marks dropped, links
// as "label (url)", lists with "- ", quotes with "> ", tables as aligned
// columns. Matrix sends it as a message's body beside the HTML.
func PlainText(md string) string { return render(md, plainFlavor) }

var plainFlavor = &flavor{
	text:     func(s string) string { return s },
	code:     func(s string) string { return s },
	link:     plainLink,
	image:    plainLink,
	autolink: func(_, label string, _ bool) string { return label },
	html:     func(s string) string { return s },
	heading:  func(_ int, inner string) string { return inner },
	fence:    func(_, code string) string { return code },
	quote:    func(body string, _ int, _ bool) string { return prefixLines(body, "> ") },
	rule:     rule,
	table:    func(l *layout, t *table) string { return t.aligned(l) },
	bullet:   func(int) string { return "- " },
	number:   dotted,
	task:     bracketTask,
}

// rule stands for a thematic break where a platform draws none.
const rule = "──────────"

// plainLink shows a link's target after its label, once where they agree.
func plainLink(label, url string) string {
	if label == "" || label == url || label == strings.TrimPrefix(url, "mailto:") {
		return url
	}
	return label + " (" + url + ")"
}

func dotted(n int) string { return strconv.Itoa(n) + ". " }

// bracketTask is a task item as Markdown writes it: "- [x] done".
func bracketTask(marker string, checked bool) string {
	if checked {
		return marker + "[x] "
	}
	return marker + "[ ] "
}

// boxTask draws a task item's box in place of its bullet.
func boxTask(_ string, checked bool) string {
	if checked {
		return "☑ "
	}
	return "☐ "
}
