package email

import (
	"html"
	"strings"
)

// render turns a reply's Markdown into the mail's two bodies. Minimal until
// the shared Markdown renderer lands: the text part is the Markdown as
// written (it reads well as it is), the HTML part that text escaped, with
// paragraphs and line breaks kept.
func render(md string) (text, htmlBody string) {
	text = strings.TrimSpace(strings.ReplaceAll(md, "\r\n", "\n"))
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><body>\n")
	for _, para := range strings.Split(text, "\n\n") {
		if strings.TrimSpace(para) == "" {
			continue
		}
		lines := strings.Split(para, "\n")
		for i, l := range lines {
			lines[i] = html.EscapeString(l)
		}
		b.WriteString("<p>" + strings.Join(lines, "<br>\n") + "</p>\n")
	}
	b.WriteString("</body></html>\n")
	return text, b.String()
}
