package email

import "github.com/nanobot-durable/nanobot/channels/markdown"

// render turns a reply's Markdown into the mail's two bodies: readable
// plain text and a small safe HTML document.
func render(md string) (text, htmlBody string) {
	return markdown.EmailText(md), format.Markdown(md)
}
