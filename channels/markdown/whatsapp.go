package markdown

// WhatsApp renders Markdown as WhatsApp's own marks: bold *x*, italic _x_,
// strike ~x~, `code` and ``` blocks, "> " quotes, "- " bullets; links as
// "label (url)" (WhatsApp links bare URLs itself), headings as bold lines,
// tables as aligned columns.
func WhatsApp(md string) string { return render(md, whatsappFlavor) }

var whatsappFlavor = &flavor{
	text:        func(s string) string { return s },
	italic:      [2]string{"_", "_"},
	bold:        [2]string{"*", "*"},
	strike:      [2]string{"~", "~"},
	code:        func(s string) string { return "`" + s + "`" },
	link:        plainLink,
	image:       plainLink,
	autolink:    func(_, label string, _ bool) string { return label },
	html:        func(s string) string { return s },
	heading:     func(_ int, inner string) string { return "*" + inner + "*" },
	boldHeading: true,
	fence:       func(_, code string) string { return "```\n" + code + "\n```" },
	quote:       func(body string, _ int, _ bool) string { return prefixLines(body, "> ") },
	rule:        rule,
	table:       func(l *layout, t *table) string { return "```\n" + t.aligned(l) + "\n```" },
	bullet:      func(int) string { return "- " },
	number:      dotted,
	task:        bracketTask,
}
