package telegram

import (
	"strings"
	"unicode/utf8"
)

// MaxMessageRunes is where a reply is split: Telegram takes 4096 characters
// a message; the margin leaves room for a code fence closed at a cut.
const MaxMessageRunes = 4000

// Split cuts Markdown into pieces of at most limit runes, at a paragraph
// break if one is in the second half of the piece, else at a line break,
// else at a space. A cut inside a code fence closes the fence in that
// piece and opens it again in the next, so each piece renders on its own.
func Split(text string, limit int) []string {
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
