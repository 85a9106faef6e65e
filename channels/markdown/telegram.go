package markdown

import "strings"

// TelegramHTML renders Markdown as the HTML subset Telegram's
// parse_mode=HTML accepts: b, i, s, code, pre (with the code's language),
// a and blockquote; headings bold, lists as "• " and "1. " lines, tables
// as aligned text in a pre block. Every tag opened is closed, all text is
// escaped, and a link of another scheme than http(s), tg or mailto is
// shown as text.
func TelegramHTML(md string) string { return render(md, telegramFlavor) }

var telegramFlavor = &flavor{
	text:     EscapeHTML,
	italic:   [2]string{"<i>", "</i>"},
	bold:     [2]string{"<b>", "</b>"},
	strike:   [2]string{"<s>", "</s>"},
	code:     func(s string) string { return "<code>" + EscapeHTML(s) + "</code>" },
	link:     telegramLink,
	image:    func(alt, url string) string { return telegramLink(EscapeHTML(alt), url) },
	autolink: func(_, label string, _ bool) string { return EscapeHTML(label) }, // Telegram links bare URLs itself
	html:     EscapeHTML,
	heading:  func(_ int, inner string) string { return "<b>" + inner + "</b>" },
	// a heading is bold already
	boldHeading: true,
	fence:       telegramPre,
	quote:       telegramQuote,
	rule:        rule,
	table:       func(l *layout, t *table) string { return "<pre>" + EscapeHTML(t.aligned(l)) + "</pre>" },
	bullet:      func(int) string { return "• " },
	number:      dotted,
	task:        boxTask,
}

// Telegram lets no entity but bold, italic and the like sit inside a link.
var codeTags = strings.NewReplacer("<code>", "", "</code>", "")

func telegramLink(label, url string) string {
	if !safeURL(url, "http://", "https://", "tg://", "mailto:") {
		if label == "" {
			return EscapeHTML(url)
		}
		return label + " (" + EscapeHTML(url) + ")"
	}
	if label = codeTags.Replace(label); label == "" {
		label = EscapeHTML(url)
	}
	return `<a href="` + escapeAttr(url) + `">` + label + "</a>"
}

func telegramPre(lang, code string) string {
	if langRe.MatchString(lang) {
		return `<pre><code class="language-` + lang + `">` + EscapeHTML(code) + "</code></pre>"
	}
	return "<pre>" + EscapeHTML(code) + "</pre>"
}

// telegramQuote quotes the outermost level: Telegram's quotes do not nest.
func telegramQuote(body string, depth int, _ bool) string {
	if depth > 1 {
		return prefixLines(body, "&gt; ")
	}
	return "<blockquote>" + body + "</blockquote>"
}
