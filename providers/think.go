package providers

import (
	"regexp"
	"sort"
	"strings"
)

// thinkTags are the inline reasoning wrappers nanobot recognises, in the
// order its regex alternation tries them.
var thinkTags = []string{"think", "thinking", "thought"}

const thinkAlt = `(?:think|thinking|thought)`

// Patterns ported from nanobot's utils/helpers.py. Python's "$" also matches
// before a final newline, hence the "\n?" before our "$".
var (
	reSelfClosingStart = regexp.MustCompile(`^\s*<thinking/>\s*`)
	reSelfClosingEnd   = regexp.MustCompile(`\s*<thinking/>\s*$`)
	reOrphanCloseStart = regexp.MustCompile(`^\s*</` + thinkAlt + `>\s*`)
	reOrphanCloseEnd   = regexp.MustCompile(`\s*</` + thinkAlt + `>\s*$`)
	reChannelStart     = regexp.MustCompile(`^\s*<\|?channel\|?>\s*`)
	rePartialTagEnd    = regexp.MustCompile(`(?:` + partialThinkTag() + `|<\|?(?:c|ch|cha|chan|chann|channe|channel)(?:\|?>?)?)\n?$`)
	reLoneLessThan     = regexp.MustCompile(`^\s*<\|?\n?$`)

	reReasonSelfClosingStart = regexp.MustCompile(`^\s*<` + thinkAlt + `/>\s*`)
	reReasonSelfClosingEnd   = regexp.MustCompile(`\s*<` + thinkAlt + `/>\s*$`)
	reReasonOpenStart        = regexp.MustCompile(`^\s*<` + thinkAlt + `>\s*`)
	reReasonCloseEnd         = regexp.MustCompile(`\s*</` + thinkAlt + `>\s*$`)
	reReasonPartialEnd       = regexp.MustCompile(`\s*(?:` + partialThinkTag() + `)\n?$`)
)

// partialThinkTag matches a think tag cut anywhere after "<" or "</".
func partialThinkTag() string {
	seen := map[string]bool{}
	var prefixes []string
	for _, t := range thinkTags {
		for i := 1; i <= len(t); i++ {
			if p := t[:i]; !seen[p] {
				seen[p] = true
				prefixes = append(prefixes, p)
			}
		}
	}
	sort.SliceStable(prefixes, func(i, j int) bool { return len(prefixes[i]) > len(prefixes[j]) })
	return `</?(?:` + strings.Join(prefixes, "|") + `)>?`
}

// StripThink removes reasoning from model text the way nanobot's strip_think
// does: closed think blocks anywhere, an unclosed block at the start,
// malformed "<think" openers, orphan closers and "<channel|>" markers at the
// edges, and tags cut off at the end of a stream. The result is trimmed.
func StripThink(text string) string {
	_, text = cutThinkBlocks(text)
	if startsWithOpenThink(text) {
		return ""
	}
	text = reSelfClosingStart.ReplaceAllString(text, "")
	text = reSelfClosingEnd.ReplaceAllString(text, "")
	text = stripMalformedOpeners(text)
	text = reOrphanCloseStart.ReplaceAllString(text, "")
	text = reOrphanCloseEnd.ReplaceAllString(text, "")
	text = reChannelStart.ReplaceAllString(text, "")
	text = rePartialTagEnd.ReplaceAllString(text, "")
	text = reLoneLessThan.ReplaceAllString(text, "")
	return strings.TrimSpace(text)
}

// ExtractThink splits inline reasoning out of content: the inner texts of
// closed think blocks (trimmed, joined by blank lines) and StripThink(content).
func ExtractThink(content string) (reasoning, visible string) {
	blocks, _ := cutThinkBlocks(content)
	parts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		if b = strings.TrimSpace(b); b != "" {
			parts = append(parts, b)
		}
	}
	return strings.Join(parts, "\n\n"), StripThink(content)
}

// stripReasoningTags unwraps text already known to be reasoning.
func stripReasoningTags(text string) string {
	text = reReasonSelfClosingStart.ReplaceAllString(text, "")
	text = reReasonSelfClosingEnd.ReplaceAllString(text, "")
	text = reReasonOpenStart.ReplaceAllString(text, "")
	text = reReasonCloseEnd.ReplaceAllString(text, "")
	text = reReasonPartialEnd.ReplaceAllString(text, "")
	return strings.TrimSpace(text)
}

// openThinkAt reports the tag of a complete "<tag>" opener at text[i:].
func openThinkAt(text string, i int) (string, bool) {
	for _, t := range thinkTags {
		if strings.HasPrefix(text[i:], "<"+t+">") {
			return t, true
		}
	}
	return "", false
}

// nextOpenThink finds the first complete opener at or after from.
func nextOpenThink(text string, from int) (int, string) {
	for i := from; i < len(text); i++ {
		if text[i] != '<' {
			continue
		}
		if t, ok := openThinkAt(text, i); ok {
			return i, t
		}
	}
	return -1, ""
}

// cutThinkBlocks removes "<tag>…</tag>" blocks with matching names (regex
// backreferences are not available in RE2) and returns their inner texts.
func cutThinkBlocks(text string) (blocks []string, rest string) {
	var b strings.Builder
	i := 0
	for {
		j, tag := nextOpenThink(text, i)
		if j < 0 {
			b.WriteString(text[i:])
			break
		}
		bodyStart := j + len(tag) + 2
		closer := "</" + tag + ">"
		k := strings.Index(text[bodyStart:], closer)
		if k < 0 {
			// No closer: like the regex, move on past this "<".
			b.WriteString(text[i : j+1])
			i = j + 1
			continue
		}
		b.WriteString(text[i:j])
		blocks = append(blocks, text[bodyStart:bodyStart+k])
		i = bodyStart + k + len(closer)
	}
	return blocks, b.String()
}

func startsWithOpenThink(text string) bool {
	t := strings.TrimLeft(text, " \t\n\r\f\v")
	_, ok := openThinkAt(t, 0)
	return ok
}

// stripMalformedOpeners drops "<think", "<thinking", "<thought" when the
// next character cannot continue a tag name (e.g. "<think广场…").
func stripMalformedOpeners(text string) string {
	if !strings.Contains(text, "<th") {
		return text
	}
	var b strings.Builder
	i := 0
	for i < len(text) {
		if text[i] == '<' {
			if n := malformedOpenerLen(text[i:]); n > 0 {
				i += n
				continue
			}
		}
		b.WriteByte(text[i])
		i++
	}
	return b.String()
}

func malformedOpenerLen(s string) int {
	for _, t := range thinkTags {
		n := 1 + len(t)
		if !strings.HasPrefix(s, "<"+t) {
			continue
		}
		if len(s) == n || !continuesTagName(s[n]) {
			return n
		}
	}
	return 0
}

func continuesTagName(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == ':' || c == '>' || c == '/'
}
