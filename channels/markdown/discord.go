package markdown

import "strings"

// Discord renders Markdown for Discord, which reads Markdown itself: text
// (its escapes kept), marks, code, links, lists and quotes pass as
// CommonMark writes them; headings stay, # to ### (deeper ones, which
// Discord shows as typed, are bold); tables, which Discord lacks, become
// aligned text in a code block; images become links; a rule, which
// Discord does not draw, is a line.
func Discord(md string) string { return render(md, discordFlavor) }

var discordFlavor = &flavor{
	text:     nil, // as written: Discord reads the escapes itself
	italic:   [2]string{"*", "*"},
	bold:     [2]string{"**", "**"},
	strike:   [2]string{"~~", "~~"},
	code:     discordCode,
	link:     discordLink,
	image:    func(alt, url string) string { return discordLink(discordBrackets.Replace(alt), url) },
	autolink: discordAutolink,
	html:     func(s string) string { return s },
	heading:  discordHeading,
	// Discord's headings are bold already
	boldHeading: true,
	fence:       discordFence,
	quote:       func(body string, _ int, _ bool) string { return prefixLines(body, "> ") },
	rule:        rule,
	table:       func(l *layout, t *table) string { return "```\n" + t.aligned(l) + "\n```" },
	bullet:      func(int) string { return "- " },
	number:      dotted,
	task:        bracketTask,
}

// discordBrackets escapes what would end an image's alt text early as a link's label.
var discordBrackets = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`)

func discordLink(label, url string) string {
	if strings.TrimSpace(label) == "" {
		return discordURL(url)
	}
	return "[" + label + "](" + discordURL(url) + ")"
}

// discordURL writes a destination in <…> where a space or a parenthesis
// would end it early.
func discordURL(u string) string {
	u = strings.NewReplacer("<", "%3C", ">", "%3E", "\n", "%0A").Replace(u)
	if strings.ContainsAny(u, " ()") {
		return "<" + u + ">"
	}
	return u
}

func discordAutolink(_, label string, angle bool) string {
	if angle {
		return "<" + label + ">"
	}
	return label
}

// discordCode fences a code span with more backticks than it holds.
func discordCode(s string) string {
	ticks := "`"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

func discordHeading(level int, inner string) string {
	inner = strings.ReplaceAll(inner, "\n", " ")
	if level > 3 {
		return "**" + inner + "**"
	}
	return strings.Repeat("#", level) + " " + inner
}

func discordFence(lang, code string) string {
	if !langRe.MatchString(lang) {
		lang = ""
	}
	return "```" + lang + "\n" + code + "\n```"
}
