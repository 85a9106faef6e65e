package telegram

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ToHTML renders the Markdown a model writes as the HTML subset Telegram's
// parse_mode=HTML accepts (b, i, s, code, pre, a, blockquote). Every tag it
// opens is closed and every <, > and & of the text is escaped, so Telegram
// can parse what it gets; Markdown it does not know stays as written.
func ToHTML(md string) string {
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fence, lang, ok := openFence(line); ok {
			var code []string
			j := i + 1
			for ; j < len(lines) && !closesFence(lines[j], fence); j++ {
				code = append(code, lines[j])
			}
			out = append(out, preBlock(lang, strings.Join(code, "\n")))
			i = j // an unclosed fence runs to the end, as Markdown reads it
			continue
		}
		if isTableRow(line) && i+1 < len(lines) && isTableSeparator(lines[i+1]) {
			j := i
			var rows []string
			for ; j < len(lines) && isTableRow(lines[j]); j++ {
				rows = append(rows, lines[j])
			}
			out = append(out, "<pre>"+escape(tableText(rows))+"</pre>")
			i = j - 1
			continue
		}
		if quoted, ok := quoteLine(line); ok {
			quote := []string{renderInline(quoted)}
			for i+1 < len(lines) {
				next, ok := quoteLine(lines[i+1])
				if !ok {
					break
				}
				quote = append(quote, renderInline(next))
				i++
			}
			out = append(out, "<blockquote>"+strings.Join(quote, "\n")+"</blockquote>")
			continue
		}
		out = append(out, renderLine(line))
	}
	return strings.Join(out, "\n")
}

var (
	headingRe = regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	ruleRe    = regexp.MustCompile(`^ {0,3}([-*_])(?:[ \t]*([-*_]))+[ \t]*$`)
	bulletRe  = regexp.MustCompile(`^([ \t]*)[-*+][ \t]+(.*)$`)
	orderedRe = regexp.MustCompile(`^([ \t]*)(\d{1,9})[.)][ \t]+(.*)$`)
	langRe    = regexp.MustCompile(`^[A-Za-z0-9_+#.-]{1,32}$`)
)

// renderLine renders one line outside code blocks, tables and quotes.
func renderLine(line string) string {
	if m := headingRe.FindStringSubmatch(line); m != nil {
		return "<b>" + renderInline(m[1]) + "</b>"
	}
	if isRule(line) {
		return "──────────"
	}
	if m := bulletRe.FindStringSubmatch(line); m != nil {
		return m[1] + "• " + renderInline(m[2])
	}
	if m := orderedRe.FindStringSubmatch(line); m != nil {
		return m[1] + m[2] + ". " + renderInline(m[3])
	}
	return renderInline(line)
}

// isRule reports a thematic break: three or more of one of - * _.
func isRule(line string) bool {
	m := ruleRe.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	marks := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, line)
	return len(marks) >= 3 && strings.Trim(marks, m[1]) == ""
}

func quoteLine(line string) (string, bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || !strings.HasPrefix(t, ">") {
		return "", false
	}
	t = t[1:]
	return strings.TrimPrefix(t, " "), true
}

// openFence recognizes a code fence opening (``` or ~~~, with an optional
// language) and returns the fence to close it with.
func openFence(line string) (fence, lang string, ok bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return "", "", false
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return "", "", false
	}
	info := strings.TrimSpace(t[n:])
	if t[0] == '`' && strings.Contains(info, "`") {
		return "", "", false
	}
	if f := strings.Fields(info); len(f) > 0 {
		lang = f[0]
	}
	return t[:n], lang, true
}

// closesFence reports whether line closes a block opened with fence.
func closesFence(line, fence string) bool {
	t := strings.TrimSpace(line)
	if len(t) < len(fence) || strings.Trim(t, fence[:1]) != "" {
		return false
	}
	return true
}

func preBlock(lang, code string) string {
	if langRe.MatchString(lang) {
		return `<pre><code class="language-` + escapeAttr(lang) + `">` + escape(code) + "</code></pre>"
	}
	return "<pre>" + escape(code) + "</pre>"
}

func isTableRow(line string) bool {
	t := strings.TrimSpace(line)
	return len(t) > 1 && strings.HasPrefix(t, "|") && strings.Count(t, "|") >= 2
}

var separatorCell = regexp.MustCompile(`^:?-{1,}:?$`)

func isTableSeparator(line string) bool {
	if !isTableRow(line) {
		return false
	}
	for _, c := range tableCells(line) {
		if !separatorCell.MatchString(c) {
			return false
		}
	}
	return true
}

func tableCells(line string) []string {
	t := strings.TrimSpace(line)
	t = strings.TrimSuffix(strings.TrimPrefix(t, "|"), "|")
	cells := strings.Split(t, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

var inlineMarks = regexp.MustCompile("\\*\\*|__|~~|`")

// tableText lays a Markdown table out as aligned columns for a <pre> block:
// Telegram has no tables.
func tableText(rows []string) string {
	var grid [][]string
	width := map[int]int{}
	for _, r := range rows {
		if isTableSeparator(r) {
			continue
		}
		cells := tableCells(r)
		for i, c := range cells {
			cells[i] = inlineMarks.ReplaceAllString(c, "")
			width[i] = max(width[i], utf8.RuneCountInString(cells[i]))
		}
		grid = append(grid, cells)
	}
	var b strings.Builder
	for n, cells := range grid {
		if n > 0 {
			b.WriteString("\n")
		}
		var line strings.Builder
		for i, c := range cells {
			if i > 0 {
				line.WriteString("  ")
			}
			line.WriteString(c + strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)))
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		if n == 0 && len(grid) > 1 {
			var rule []string
			for i := range cells {
				rule = append(rule, strings.Repeat("─", max(width[i], 1)))
			}
			b.WriteString("\n" + strings.Join(rule, "  "))
		}
	}
	return b.String()
}

// renderInline renders emphasis, code spans and links of one line; a
// marker with no partner is text.
func renderInline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			b.WriteString(escape(s[i+1 : i+2]))
			i += 2
			continue
		case c == '`':
			n := runLen(s, i, '`')
			if end := closingRun(s, i+n, n); end >= 0 {
				code := s[i+n : end]
				if len(code) > 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.TrimSpace(code) != "" {
					code = code[1 : len(code)-1]
				}
				b.WriteString("<code>" + escape(code) + "</code>")
				i = end + n
				continue
			}
			b.WriteString(s[i : i+n])
			i += n
			continue
		case c == '[':
			if text, url, end, ok := link(s, i); ok {
				if safeURL(url) {
					b.WriteString(`<a href="` + escapeAttr(url) + `">` + renderInline(text) + "</a>")
				} else {
					b.WriteString(renderInline(text) + " (" + escape(url) + ")")
				}
				i = end
				continue
			}
		case c == '<':
			if end := strings.IndexByte(s[i:], '>'); end > 0 && safeURL(s[i+1:i+end]) && !strings.ContainsAny(s[i+1:i+end], " <") {
				b.WriteString(escape(s[i+1 : i+end])) // an autolink: Telegram links bare URLs itself
				i += end + 1
				continue
			}
		case c == '*' || c == '_' || c == '~':
			if open, closeTag, inner, end, ok := emphasis(s, i); ok {
				b.WriteString(open + renderInline(inner) + closeTag)
				i = end
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString(escape(string(r)))
		i += size
	}
	return b.String()
}

// emphasis matches bold (** __), italic (* _), bold italic (***) and
// strikethrough (~~) starting at i, with the partner marker later on the line.
func emphasis(s string, i int) (open, closeTag, inner string, end int, ok bool) {
	c := s[i]
	n := runLen(s, i, c)
	if i > 0 && c == '_' && isWordByte(s[i-1]) {
		return "", "", "", 0, false // snake_case is not emphasis
	}
	type kind struct {
		marker      string
		open, close string
	}
	var kinds []kind
	switch c {
	case '~':
		kinds = []kind{{"~~", "<s>", "</s>"}}
	case '*', '_':
		m := string(c)
		kinds = []kind{{m + m + m, "<b><i>", "</i></b>"}, {m + m, "<b>", "</b>"}, {m, "<i>", "</i>"}}
	}
	for _, k := range kinds {
		if n < len(k.marker) {
			continue
		}
		start := i + len(k.marker)
		if start >= len(s) || s[start] == ' ' || s[start] == '\t' {
			continue
		}
		for from := start; from < len(s); {
			j := strings.Index(s[from:], k.marker)
			if j < 0 {
				break
			}
			j += from
			after := j + len(k.marker)
			leftOK := j > start && s[j-1] != ' ' && s[j-1] != '\t'
			// a single marker must not be part of a longer run (** inside *x**)
			runOK := len(k.marker) > 1 || ((after >= len(s) || s[after] != c) && s[j-1] != c)
			wordOK := c != '_' || after >= len(s) || !isWordByte(s[after])
			if leftOK && runOK && wordOK {
				return k.open, k.close, s[start:j], after, true
			}
			from = j + 1
		}
	}
	return "", "", "", 0, false
}

// link matches [text](url) at i.
func link(s string, i int) (text, url string, end int, ok bool) {
	depth := 0
	j := i
	for ; j < len(s); j++ {
		if s[j] == '[' {
			depth++
		} else if s[j] == ']' {
			depth--
			if depth == 0 {
				break
			}
		}
	}
	if j >= len(s)-1 || s[j+1] != '(' {
		return "", "", 0, false
	}
	depth = 0
	k := j + 1
	for ; k < len(s); k++ {
		if s[k] == '(' {
			depth++
		} else if s[k] == ')' {
			depth--
			if depth == 0 {
				break
			}
		}
	}
	if k >= len(s) {
		return "", "", 0, false
	}
	target := strings.TrimSpace(s[j+2 : k])
	if f := strings.Fields(target); len(f) > 0 {
		target = strings.Trim(f[0], "<>")
	}
	if target == "" || s[i+1:j] == "" {
		return "", "", 0, false
	}
	return s[i+1 : j], target, k + 1, true
}

// safeURL admits the schemes Telegram links; others are shown as text.
func safeURL(u string) bool {
	l := strings.ToLower(u)
	for _, p := range []string{"http://", "https://", "tg://", "mailto:"} {
		if strings.HasPrefix(l, p) && len(l) > len(p) {
			return true
		}
	}
	return false
}

func runLen(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// closingRun finds a run of exactly n backticks at or after from.
func closingRun(s string, from, n int) int {
	for j := from; j < len(s); {
		if s[j] != '`' {
			j++
			continue
		}
		m := runLen(s, j, '`')
		if m == n {
			return j
		}
		j += m
	}
	return -1
}

func isWordByte(b byte) bool {
	return b < utf8.RuneSelf && (unicode.IsLetter(rune(b)) || unicode.IsDigit(rune(b)))
}

func isASCIIPunct(b byte) bool {
	return b < utf8.RuneSelf && unicode.IsPunct(rune(b)) || strings.IndexByte("`*_~[]()#+-.!|<>\\", b) >= 0
}

var htmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
var attrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

// escape makes text safe inside Telegram HTML.
func escape(s string) string { return htmlEscaper.Replace(s) }

func escapeAttr(s string) string { return attrEscaper.Replace(s) }
