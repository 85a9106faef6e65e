package slack

import (
	"regexp"
	"strconv"
	"strings"
)

// ToMrkdwn renders the Markdown a model writes as Slack's mrkdwn: bold
// *x*, italic _x_, strike ~x~, links <url|text>, bullets, headings as bold
// lines, tables as one line per row, and &, <, > escaped everywhere
// (code included) as Slack requires.
func ToMrkdwn(md string) string {
	md = strings.ReplaceAll(md, "\r\n", "\n")
	md = strings.ReplaceAll(md, "\x00", "")
	lines := strings.Split(md, "\n")
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		if fence, ok := openingFence(lines[i]); ok {
			var code []string
			j := i + 1
			for ; j < len(lines) && !closesFence(lines[j], fence); j++ {
				code = append(code, lines[j])
			}
			out = append(out, "```\n"+escapeText(strings.Join(code, "\n"))+"\n```")
			i = j // the closing fence (or the end of an unclosed block)
			continue
		}
		if isTableStart(lines, i) {
			j := i + 2
			for j < len(lines) && isTableRow(lines[j]) {
				j++
			}
			out = append(out, tableRows(lines[i:j])...)
			i = j - 1
			continue
		}
		out = append(out, blockLine(lines[i]))
	}
	return strings.Join(out, "\n")
}

var (
	fenceRe    = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	headingRe  = regexp.MustCompile(`^ {0,3}(#{1,6})(?:\s+(.*?))?\s*$`)
	closingHRe = regexp.MustCompile(`\s+#+$`)
	ruleRe     = regexp.MustCompile(`^ {0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$`)
	quoteRe    = regexp.MustCompile(`^ {0,3}>\s?(.*)$`)
	bulletRe   = regexp.MustCompile(`^(\s*)[-*+]\s+(.*)$`)
	taskRe     = regexp.MustCompile(`^\[([ xX])\]\s+(.*)$`)
	orderedRe  = regexp.MustCompile(`^(\s*)(\d{1,9})[.)]\s+(.*)$`)
	tableSepRe = regexp.MustCompile(`^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$`)
)

// openingFence reports whether line opens a fenced code block, and its fence.
func openingFence(line string) (string, bool) {
	m := fenceRe.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	if m[1][0] == '`' && strings.Contains(line[len(m[0]):], "`") {
		return "", false // ``` followed by more backticks is inline code, not a fence
	}
	return m[1], true
}

func closesFence(line, fence string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= len(fence) && strings.Trim(t, fence[:1]) == "" && len(line)-len(strings.TrimLeft(line, " ")) <= 3
}

// blockLine renders one line outside code blocks and tables.
func blockLine(line string) string {
	if strings.TrimSpace(line) == "" {
		return ""
	}
	if ruleRe.MatchString(line) {
		return "──────────"
	}
	if m := headingRe.FindStringSubmatch(line); m != nil {
		text := strings.TrimSpace(closingHRe.ReplaceAllString(m[2], ""))
		if text == "" {
			return ""
		}
		return "*" + inline(stripEmphasis(text)) + "*"
	}
	if m := quoteRe.FindStringSubmatch(line); m != nil {
		return ">" + " " + blockLine(m[1])
	}
	if m := bulletRe.FindStringSubmatch(line); m != nil {
		bullet := "•"
		if len(m[1]) > 0 {
			bullet = "◦"
		}
		item := m[2]
		if t := taskRe.FindStringSubmatch(item); t != nil {
			bullet, item = "☐", t[2]
			if t[1] != " " {
				bullet = "☑"
			}
		}
		return m[1] + bullet + " " + inline(item)
	}
	if m := orderedRe.FindStringSubmatch(line); m != nil {
		return m[1] + m[2] + ". " + inline(m[3])
	}
	return inline(line)
}

// stripEmphasis drops bold markers inside a heading, which is bold already.
func stripEmphasis(s string) string {
	s = strings.ReplaceAll(s, "**", "")
	return strings.ReplaceAll(s, "__", "")
}

func isTableRow(line string) bool {
	t := strings.TrimSpace(line)
	return t != "" && strings.Contains(t, "|")
}

func isTableStart(lines []string, i int) bool {
	return i+1 < len(lines) && isTableRow(lines[i]) && strings.Contains(lines[i+1], "-") &&
		strings.Contains(lines[i+1], "|") && tableSepRe.MatchString(lines[i+1])
}

func tableCells(line string) []string {
	t := strings.TrimSpace(line)
	t = strings.TrimPrefix(t, "|")
	t = strings.TrimSuffix(t, "|")
	cells := strings.Split(t, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// tableRows renders a table as nanobot does for Slack, which has no
// tables: one line per row, "*header*: cell" joined by " · ".
func tableRows(lines []string) []string {
	headers := tableCells(lines[0])
	var rows []string
	for _, line := range lines[2:] {
		cells := tableCells(line)
		var parts []string
		for i, h := range headers {
			if i >= len(cells) || cells[i] == "" {
				continue
			}
			if h == "" {
				parts = append(parts, inline(cells[i]))
				continue
			}
			parts = append(parts, "*"+inline(stripEmphasis(h))+"*: "+inline(cells[i]))
		}
		if len(parts) > 0 {
			rows = append(rows, strings.Join(parts, " · "))
		}
	}
	if len(rows) == 0 { // a header with no rows: show the header
		var parts []string
		for _, h := range headers {
			if h != "" {
				parts = append(parts, "*"+inline(stripEmphasis(h))+"*")
			}
		}
		rows = append(rows, strings.Join(parts, " · "))
	}
	return rows
}

var (
	codeSpanRe   = regexp.MustCompile("(`+)([^`]|[^`].*?[^`])(`+)")
	autolinkRe   = regexp.MustCompile(`<((?:https?|mailto):[^\s<>]+)>`)
	slackTokenRe = regexp.MustCompile(`<(?:@[UWB][A-Z0-9]+|#C[A-Z0-9]+(?:\|[^<>|]*)?)>`)
	bareURLRe    = regexp.MustCompile(`https?://[^\s<>]+`)
	boldItalRe   = regexp.MustCompile(`\*\*\*(\S|\S.*?\S)\*\*\*`)
	boldRe       = regexp.MustCompile(`\*\*(\S|\S.*?\S)\*\*`)
	boldUnderRe  = regexp.MustCompile(`(^|[^\pL\pN_])__(\S|\S.*?\S)__($|[^\pL\pN_.]|\.(?:\s|$))`)
	italicRe     = regexp.MustCompile(`(^|[^\pL\pN*\\])\*(\S|\S.*?\S)\*($|[^\pL\pN*])`)
	strikeRe     = regexp.MustCompile(`~~(\S|\S.*?\S)~~`)
)

// boldMark stands for a bold "*" until italics are converted, so the
// italic rule does not read it.
const boldMark = "\x01"

// inline renders emphasis, code spans and links of one line of text.
func inline(s string) string {
	var saved []string
	save := func(v string) string {
		saved = append(saved, v)
		return "\x00" + strconv.Itoa(len(saved)-1) + "\x00"
	}
	s = codeSpanRe.ReplaceAllStringFunc(s, func(m string) string {
		g := codeSpanRe.FindStringSubmatch(m)
		if len(g[1]) != len(g[3]) {
			return m
		}
		code := g[2]
		if len(code) > 2 && code[0] == ' ' && code[len(code)-1] == ' ' {
			code = code[1 : len(code)-1]
		}
		return save("`" + escapeText(code) + "`")
	})
	s = slackTokenRe.ReplaceAllStringFunc(s, save) // a user or channel mention the model wrote
	s = autolinkRe.ReplaceAllStringFunc(s, func(m string) string {
		return save("<" + escapeURL(m[1:len(m)-1]) + ">")
	})
	s = replaceLinks(s, func(label, url string, image bool) string {
		if !linkable(url) {
			if image {
				return save(escapeText(label + " (" + url + ")"))
			}
			return emphasis(escapeText(label)) + " (" + save(escapeText(url)) + ")"
		}
		if label == "" {
			return save("<" + escapeURL(url) + ">")
		}
		return save("<" + escapeURL(url) + "|" + strings.ReplaceAll(emphasis(escapeText(label)), "|", "¦") + ">")
	})
	s = bareURLRe.ReplaceAllStringFunc(s, func(u string) string {
		trimmed := trimURL(u)
		return save(escapeText(trimmed)) + u[len(trimmed):]
	})
	s = emphasis(escapeText(s))
	for strings.Contains(s, "\x00") {
		before := s
		for i := len(saved) - 1; i >= 0; i-- {
			s = strings.ReplaceAll(s, "\x00"+strconv.Itoa(i)+"\x00", saved[i])
		}
		if s == before {
			break
		}
	}
	return s
}

// emphasis converts Markdown bold, italic and strike-through to mrkdwn.
func emphasis(s string) string {
	s = boldItalRe.ReplaceAllString(s, boldMark+"_${1}_"+boldMark)
	s = boldRe.ReplaceAllString(s, boldMark+"${1}"+boldMark)
	s = replaceAllRepeated(boldUnderRe, s, "${1}"+boldMark+"${2}"+boldMark+"${3}")
	s = replaceAllRepeated(italicRe, s, "${1}_${2}_${3}")
	s = strikeRe.ReplaceAllString(s, "~${1}~")
	return strings.ReplaceAll(s, boldMark, "*")
}

// replaceAllRepeated applies a rule whose match consumes the character
// around it until nothing changes, so "*a* *b*" converts both.
func replaceAllRepeated(re *regexp.Regexp, s, repl string) string {
	for range 8 {
		next := re.ReplaceAllString(s, repl)
		if next == s {
			break
		}
		s = next
	}
	return s
}

// replaceLinks finds [label](url) and ![alt](url), with balanced
// parentheses in the URL (wiki links), and replaces each with render's result.
func replaceLinks(s string, render func(label, url string, image bool) string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '[' {
			b.WriteByte(s[i])
			i++
			continue
		}
		image := i > 0 && s[i-1] == '!'
		label, url, end, ok := parseLink(s, i)
		if !ok {
			b.WriteByte(s[i])
			i++
			continue
		}
		if image {
			out := b.String()
			b.Reset()
			b.WriteString(out[:len(out)-1]) // drop the "!" already written
		}
		b.WriteString(render(label, url, image))
		i = end
	}
	return b.String()
}

// parseLink reads [label](url "title") starting at s[i] == '['.
func parseLink(s string, i int) (label, url string, end int, ok bool) {
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
	if j >= len(s) || j+1 >= len(s) || s[j+1] != '(' {
		return "", "", 0, false
	}
	label = s[i+1 : j]
	k := j + 2
	depth = 1
	start := k
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
	target := strings.TrimSpace(s[start:k])
	if sp := strings.IndexAny(target, " \t"); sp >= 0 { // drop a "title"
		target = target[:sp]
	}
	target = strings.TrimSuffix(strings.TrimPrefix(target, "<"), ">")
	if target == "" {
		return "", "", 0, false
	}
	return label, target, k + 1, true
}

func linkable(url string) bool {
	l := strings.ToLower(url)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "mailto:")
}

// trimURL leaves sentence punctuation and an unbalanced ")" out of a bare URL.
func trimURL(u string) string {
	for len(u) > 0 {
		last := u[len(u)-1]
		switch {
		case strings.IndexByte(".,;:!?'\"*_~", last) >= 0:
			u = u[:len(u)-1]
		case last == ')' && strings.Count(u, "(") < strings.Count(u, ")"):
			u = u[:len(u)-1]
		default:
			return u
		}
	}
	return u
}

var textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escapeText escapes the three characters Slack reads as markup.
func escapeText(s string) string { return textEscaper.Replace(s) }

// escapeURL makes a URL safe inside <url|label>: "|" and ">" would end it.
func escapeURL(u string) string {
	u = strings.NewReplacer("|", "%7C", ">", "%3E", "<", "%3C").Replace(u)
	return strings.ReplaceAll(u, "&", "&amp;")
}
