package matrix

import (
	"html"
	"strings"

	"github.com/nanobot-durable/nanobot/channels/markdown"
)

// toHTML is the org.matrix.custom.html of a reply's Markdown, or "" when
// the text has no formatting (plain body only, as nanobot sends it).
func toHTML(md string) string {
	h := format.Markdown(md)
	bare := strings.NewReplacer("<p>", "", "</p>", "", "<br>", "", "\n", "").Replace(h)
	if bare == strings.ReplaceAll(html.EscapeString(markdown.PlainText(md)), "\n", "") {
		return "" // paragraphs and line breaks only: the body says it all
	}
	return h
}
