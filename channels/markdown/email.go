package markdown

import (
	"strings"
	"unicode/utf8"
)

// EmailText renders Markdown as the plain text part of an email: as
// PlainText, with headings underlined, code blocks indented and code
// spans in backticks, so they stand out without a font.
func EmailText(md string) string { return render(md, emailTextFlavor) }

// EmailHTML renders Markdown as a whole small HTML document for an
// email's HTML part: the tags of MatrixHTML under a short style sheet,
// links only to http(s) and mailto, no scripts, images or remote content.
func EmailHTML(md string) string {
	return emailHead + renderHTML(md, emailFlavor) + "\n</body>\n</html>\n"
}

var emailFlavor = htmlFlavor("https://", "http://", "mailto:")

var emailTextFlavor = emailText(*plainFlavor)

// emailText is plain text with headings, code blocks and code spans marked.
func emailText(f flavor) *flavor {
	f.code = func(s string) string { return "`" + s + "`" }
	f.fence = func(_, code string) string { return prefixLines(code, "    ") }
	f.heading = func(level int, inner string) string {
		line := "="
		if level > 1 {
			line = "-"
		}
		width := 0
		for _, l := range strings.Split(inner, "\n") {
			width = max(width, utf8.RuneCountInString(l))
		}
		return inner + "\n" + strings.Repeat(line, width)
	}
	return &f
}

const emailHead = `<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { font-family: sans-serif; line-height: 1.5; }
pre { background: #f4f4f4; padding: 8px; overflow-x: auto; }
blockquote { margin: 0; padding-left: 12px; border-left: 3px solid #ccc; color: #555; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 4px 8px; }
</style>
</head>
<body>
`
