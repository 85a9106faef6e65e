package feishu

import "strings"

// hintLines splits a tool hint into one call per line, on the ", " that
// separate top-level calls (not those inside parentheses or quotes), as nanobot does.
func hintLines(hint string) []string {
	var parts []string
	var buf strings.Builder
	depth, quote, escaped := 0, rune(0), false
	runes := []rune(hint)
	for i, ch := range runes {
		buf.WriteRune(ch)
		switch {
		case quote != 0:
			switch {
			case escaped:
				escaped = false
			case ch == '\\':
				escaped = true
			case ch == quote:
				quote = 0
			}
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == '(':
			depth++
		case ch == ')' && depth > 0:
			depth--
		case ch == ',' && depth == 0 && i+1 < len(runes) && runes[i+1] == ' ':
			parts = append(parts, strings.TrimRight(buf.String(), " "))
			buf.Reset()
		}
	}
	parts = append(parts, strings.TrimSpace(buf.String()))
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(strings.TrimSuffix(p, ",")); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// DrawHint implements channels.HintDrawer: each call on its line, after
// nanobot's toolHintPrefix (🔧).
func (c *Channel) DrawHint(hint string) string {
	lines := hintLines(hint)
	for i, l := range lines {
		lines[i] = strings.TrimSpace(c.cfg.ToolHintPrefix + " " + l)
	}
	return strings.Join(lines, "\n")
}
