package markdown

import "strings"

// WeCom renders Markdown for WeCom's AI bot messages (stream replies and
// proactive markdown), which read the common Markdown: headings # to
// ######, bold, italic, inline code, links and quotes pass as CommonMark
// writes them, with lists and fenced code; strikethrough, which WeCom does
// not draw, keeps only its text; tables become aligned text in a code
// block; images become links; a rule is a line.
func WeCom(md string) string { return render(md, wecomFlavor) }

// wecomFlavor is Discord's without strikethrough, with headings # to ######.
var wecomFlavor = derive(discordFlavor, func(f *flavor) {
	f.strike, f.heading, f.boldHeading = [2]string{}, hashHeading, false
})

// hashHeading is a heading as CommonMark writes it, on one line.
func hashHeading(level int, inner string) string {
	return strings.Repeat("#", level) + " " + strings.ReplaceAll(inner, "\n", " ")
}
