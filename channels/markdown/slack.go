package markdown

import (
	"regexp"
	"strings"
)

// SlackMrkdwn renders Markdown as Slack's mrkdwn: bold *x*, italic _x_,
// strike ~x~, links <url|label>, "•" bullets, headings as bold lines,
// tables as one "*header*: cell" line a row, and &, < and > escaped
// everywhere (code included) as Slack requires. A user or channel mention
// the model wrote (<@U…>, <#C…>) is kept.
func SlackMrkdwn(md string) string { return render(md, slackFlavor) }

var slackFlavor = &flavor{
	text:     slackText,
	italic:   [2]string{"_", "_"},
	bold:     [2]string{"*", "*"},
	strike:   [2]string{"~", "~"},
	code:     func(s string) string { return "`" + EscapeSlack(s) + "`" },
	link:     slackLink,
	image:    slackImage,
	autolink: slackAutolink,
	html:     EscapeSlack,
	heading:  func(_ int, inner string) string { return "*" + inner + "*" },
	// a heading is bold already: Slack reads no * inside *…*
	boldHeading: true,
	fence:       func(_, code string) string { return "```\n" + EscapeSlack(code) + "\n```" },
	quote:       slackQuote,
	rule:        rule,
	table:       slackTable,
	bullet:      slackBullet,
	number:      dotted,
	task:        boxTask,
}

var slackTokenRe = regexp.MustCompile(`<(?:@[UWB][A-Z0-9]+|#C[A-Z0-9]+(?:\|[^<>|]*)?)>`)

// slackText escapes text but for the mentions in it.
func slackText(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range slackTokenRe.FindAllStringIndex(s, -1) {
		b.WriteString(EscapeSlack(s[last:m[0]]))
		b.WriteString(s[m[0]:m[1]])
		last = m[1]
	}
	b.WriteString(EscapeSlack(s[last:]))
	return b.String()
}

func slackLinkable(url string) bool { return safeURL(url, "http://", "https://", "mailto:") }

func slackLink(label, url string) string {
	if !slackLinkable(url) {
		return label + " (" + EscapeSlack(url) + ")"
	}
	if label == "" {
		return "<" + EscapeSlackURL(url) + ">"
	}
	return "<" + EscapeSlackURL(url) + "|" + strings.ReplaceAll(label, "|", "¦") + ">"
}

func slackImage(alt, url string) string {
	if !slackLinkable(url) {
		return EscapeSlack(alt + " (" + url + ")")
	}
	return slackLink(EscapeSlack(alt), url)
}

// slackAutolink links a URL written in <…>; Slack links a bare one itself.
func slackAutolink(url, label string, angle bool) string {
	if !angle || !slackLinkable(url) {
		return EscapeSlack(label)
	}
	if label == url {
		return "<" + EscapeSlackURL(url) + ">"
	}
	return slackLink(EscapeSlack(label), url)
}

// slackQuote marks a quote's lines; after a list's bullet, where Slack
// reads no quote, the mark is an escaped >.
func slackQuote(body string, _ int, inList bool) string {
	if inList {
		return prefixLines(body, "&gt; ")
	}
	return prefixLines(body, "> ")
}

func slackBullet(depth int) string {
	if depth > 0 {
		return "◦ "
	}
	return "• "
}

// slackTable writes a row a line, "*header*: cell" joined by " · ":
// Slack has no tables, and no monospaced block keeps a row's marks.
func slackTable(l *layout, t *table) string {
	head := make([]string, len(t.head))
	for i, c := range t.head {
		head[i] = l.within(&l.f.bold, true, func() string { return l.inlines(c) })
	}
	var rows []string
	for _, cells := range t.rows {
		var parts []string
		for i, c := range cells {
			cell := l.inlines(c)
			switch {
			case cell == "":
			case i >= len(head) || head[i] == "":
				parts = append(parts, cell)
			default:
				parts = append(parts, "*"+head[i]+"*: "+cell)
			}
		}
		if len(parts) > 0 {
			rows = append(rows, strings.Join(parts, " · "))
		}
	}
	if len(rows) == 0 { // a header with no rows: show the header
		var parts []string
		for _, h := range head {
			if h != "" {
				parts = append(parts, "*"+h+"*")
			}
		}
		rows = append(rows, strings.Join(parts, " · "))
	}
	return strings.Join(rows, "\n")
}

var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// EscapeSlack escapes the three characters Slack reads as markup.
func EscapeSlack(s string) string { return slackEscaper.Replace(s) }

var slackURLEscaper = strings.NewReplacer("|", "%7C", ">", "%3E", "<", "%3C", "&", "&amp;")

// EscapeSlackURL makes a URL safe inside <url|label>: "|" and ">" would end it.
func EscapeSlackURL(u string) string { return slackURLEscaper.Replace(u) }
