package markdown

import "strings"

// DingTalk renders Markdown for DingTalk's markdown messages, which read a
// subset of it: text, bold, italic, code, links, images, headings (# to
// ######), lists and quotes pass as CommonMark writes them; strikethrough,
// which DingTalk shows as typed, is dropped; tables, which it lacks,
// become aligned text in a code block; task items get a drawn box; a
// bare link stays bare (DingTalk links it itself).
func DingTalk(md string) string { return render(md, dingtalkFlavor) }

var dingtalkFlavor = &flavor{
	text:     nil, // as written: DingTalk reads the escapes itself
	italic:   [2]string{"*", "*"},
	bold:     [2]string{"**", "**"},
	code:     discordCode,
	link:     discordLink,
	image:    func(alt, url string) string { return "!" + discordLink(discordBrackets.Replace(alt), url) },
	autolink: func(_, label string, _ bool) string { return label },
	html:     func(s string) string { return s },
	heading: func(level int, inner string) string {
		return strings.Repeat("#", level) + " " + strings.ReplaceAll(inner, "\n", " ")
	},
	fence:  discordFence,
	quote:  func(body string, _ int, _ bool) string { return prefixLines(body, "> ") },
	rule:   rule,
	table:  func(l *layout, t *table) string { return "```\n" + t.aligned(l) + "\n```" },
	bullet: func(int) string { return "- " },
	number: dotted,
	task:   boxTask,
}
