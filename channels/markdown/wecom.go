package markdown

import "strings"

// WeCom renders Markdown for WeCom's AI bot messages (stream replies and
// proactive markdown), which read the common Markdown: headings # to
// ######, bold, italic, inline code, links and quotes pass as CommonMark
// writes them, with lists and fenced code; strikethrough, which WeCom does
// not draw, keeps only its text; tables become aligned text in a code
// block; images become links; a rule is a line.
func WeCom(md string) string { return render(md, wecomFlavor) }

var wecomFlavor = &flavor{
	text:     nil, // as written: WeCom reads the escapes itself
	italic:   [2]string{"*", "*"},
	bold:     [2]string{"**", "**"},
	strike:   [2]string{"", ""},
	code:     discordCode,
	link:     discordLink,
	image:    func(alt, url string) string { return discordLink(discordBrackets.Replace(alt), url) },
	autolink: discordAutolink,
	html:     func(s string) string { return s },
	heading:  wecomHeading,
	fence:    discordFence,
	quote:    func(body string, _ int, _ bool) string { return prefixLines(body, "> ") },
	rule:     rule,
	table:    func(l *layout, t *table) string { return "```\n" + t.aligned(l) + "\n```" },
	bullet:   func(int) string { return "- " },
	number:   dotted,
	task:     bracketTask,
}

func wecomHeading(level int, inner string) string {
	return strings.Repeat("#", level) + " " + strings.ReplaceAll(inner, "\n", " ")
}
