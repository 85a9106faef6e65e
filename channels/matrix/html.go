package matrix

import (
	"html"
	"regexp"
	"strings"
)

// toHTML is the org.matrix.custom.html of a reply's Markdown, or "" when
// the text has no formatting (plain body only, as nanobot sends it). It is
// the one place outgoing text is rendered; a minimal renderer until the
// shared channels/markdown package (MatrixHTML) is on main.
func toHTML(markdown string) string {
	var out strings.Builder
	lines := strings.Split(strings.ReplaceAll(markdown, "\r\n", "\n"), "\n")
	formatted := false
	var para []string
	flush := func() {
		if len(para) > 0 {
			out.WriteString("<p>" + strings.Join(para, "<br>") + "</p>")
			para = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			flush()
			lang := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
			var code []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				code = append(code, lines[i])
			}
			class := ""
			if lang != "" && !strings.ContainsAny(lang, " \"'<>&") {
				class = ` class="language-` + lang + `"`
			}
			out.WriteString("<pre><code" + class + ">" + html.EscapeString(strings.Join(code, "\n")) + "\n</code></pre>")
			formatted = true
		case heading.MatchString(trimmed):
			flush()
			m := heading.FindStringSubmatch(trimmed)
			level := string(rune('0' + len(m[1])))
			out.WriteString("<h" + level + ">" + inline(m[2]) + "</h" + level + ">")
			formatted = true
		case bullet.MatchString(line):
			flush()
			out.WriteString("<ul>")
			for ; i < len(lines) && bullet.MatchString(lines[i]); i++ {
				out.WriteString("<li>" + inline(bullet.FindStringSubmatch(lines[i])[1]) + "</li>")
			}
			i--
			out.WriteString("</ul>")
			formatted = true
		case trimmed == "":
			flush()
		default:
			rendered := inline(line)
			if rendered != html.EscapeString(line) {
				formatted = true
			}
			para = append(para, rendered)
		}
	}
	flush()
	if !formatted {
		return ""
	}
	return out.String()
}

var (
	heading    = regexp.MustCompile(`^(#{1,6})\s+(.+)$`)
	bullet     = regexp.MustCompile(`^\s*[-*+]\s+(.+)$`)
	inlineCode = regexp.MustCompile("`([^`]+)`")
	bold       = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	italic     = regexp.MustCompile(`(^|[^*\w])\*([^*\s][^*]*)\*`)
	link       = regexp.MustCompile(`\[([^\]]+)\]\((https?://[^\s)]+)\)`)
)

// inline renders code spans, links, bold and italic in one escaped line;
// code spans are cut out first so their contents stay literal.
func inline(line string) string {
	var spans []string
	line = inlineCode.ReplaceAllStringFunc(line, func(s string) string {
		spans = append(spans, "<code>"+html.EscapeString(s[1:len(s)-1])+"</code>")
		return "\x00" + string(rune('0'+len(spans)-1)) + "\x00"
	})
	s := html.EscapeString(line)
	s = link.ReplaceAllString(s, `<a href="$2">$1</a>`)
	s = bold.ReplaceAllString(s, "<strong>$1</strong>")
	s = italic.ReplaceAllString(s, "$1<em>$2</em>")
	for i, span := range spans {
		s = strings.Replace(s, "\x00"+string(rune('0'+i))+"\x00", span, 1)
	}
	return s
}
