package channels

import (
	"strings"
	"unicode/utf8"
)

// Temporary copy of Telegram's splitter, replaced by the Markdown package's.

// Split cuts Markdown into pieces of at most limit runes, at a paragraph
// break if one is in the second half of the piece, else at a line break,
// else at a space. A cut inside a code fence closes the fence in that
// piece and opens it again in the next, so each piece renders on its own.
func splitText(text string, limit int) []string {
	text = strings.Trim(text, "\n")
	if text == "" {
		return nil
	}
	var out []string
	for text != "" {
		if utf8.RuneCountInString(text) <= limit {
			out = append(out, text)
			break
		}
		// room for the "\n```" that may close a fence cut in two
		budget := max(limit-8, limit/2)
		piece, rest := cutAt(text, budget)
		if f, l, open := openFenceAtEnd(piece); open && strings.TrimSpace(piece) == strings.TrimSpace(f+l) {
			n := byteIndexOfRune(text, budget) // only a fence line before the break: cut inside the code
			piece, rest = text[:n], text[n:]
		}
		if fence, lang, open := openFenceAtEnd(piece); open && len(fence)+len(lang) < limit/4 {
			piece = strings.TrimRight(piece, "\n") + "\n" + fence
			rest = strings.TrimLeft(fence+lang+"\n"+strings.TrimPrefix(rest, "\n"), " ")
		} else {
			rest = strings.TrimLeft(rest, "\n")
		}
		piece = strings.TrimRight(piece, " \n")
		if piece != "" {
			out = append(out, piece)
		}
		text = rest
	}
	return out
}

// cutAt splits text before at most budget runes, at the best boundary.
func cutAt(text string, budget int) (string, string) {
	head := text
	if n := byteIndexOfRune(text, budget); n < len(text) {
		head = text[:n]
	}
	for _, minPos := range []int{len(head) / 2, 1} {
		for _, sep := range []string{"\n\n", "\n", " "} {
			if pos := strings.LastIndex(head, sep); pos >= minPos {
				return text[:pos], text[pos+len(sep):]
			}
		}
	}
	return head, text[len(head):]
}

// byteIndexOfRune is the byte offset of the n-th rune (len(s) past the end).
func byteIndexOfRune(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// openFenceAtEnd reports a code fence that piece opens and does not close,
// with the fence and language to reopen it with.
func openFenceAtEnd(piece string) (fence, lang string, open bool) {
	for _, line := range strings.Split(piece, "\n") {
		if open {
			if closesFence(line, fence) {
				open = false
			}
			continue
		}
		if f, l, ok := openFence(line); ok {
			fence, lang, open = f, l, true
		}
	}
	return fence, lang, open
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
