package slack

import (
	"strings"
	"unicode/utf8"
)

// MaxMessageLen is where nanobot splits a Slack message (Slack allows
// about 40 000 characters; the margin is nanobot's).
const MaxMessageLen = 39_000

// fenceRoom is kept free in each chunk to close and reopen a code block
// that a split cuts through.
const fenceRoom = len("\n```") + len("```\n")

// Split cuts mrkdwn into messages of at most limit characters, at a
// paragraph, line or word break when one is near, never inside an
// escape (&amp;) or a <link>; a code block cut in two is closed at the end
// of one part and reopened at the start of the next.
func Split(text string, limit int) []string {
	if utf8.RuneCountInString(text) <= limit {
		return []string{text}
	}
	if limit <= fenceRoom+1 {
		limit = fenceRoom + 2
	}
	var chunks []string
	rest := text
	reopen := false
	for rest != "" {
		if reopen {
			rest = "```\n" + rest
		}
		if utf8.RuneCountInString(rest) <= limit {
			if last := strings.TrimRight(rest, " \n"); strings.TrimSpace(last) != "" {
				chunks = append(chunks, last)
			}
			break
		}
		cut := cutPoint(rest, limit-fenceRoom)
		chunk := strings.TrimRight(rest[:cut], " \n")
		rest = strings.TrimLeft(rest[cut:], " \n")
		reopen = strings.Count(chunk, "```")%2 == 1
		if reopen {
			chunk += "\n```"
		}
		if strings.TrimSpace(chunk) != "" {
			chunks = append(chunks, chunk)
		}
	}
	return chunks
}

// cutPoint is the byte offset to cut s at so the head has at most n runes.
func cutPoint(s string, n int) int {
	hard := 0
	for i := range s {
		if n == 0 {
			hard = i
			break
		}
		n--
	}
	head := s[:hard]
	floor := hard / 2 // a break in the first half would make tiny parts
	for _, sep := range []string{"\n\n", "\n", " "} {
		if i := strings.LastIndex(head, sep); i > 0 && i >= floor {
			return i + len(sep)
		}
	}
	// No break near: cut hard, but not inside "&amp;" or "<url|text>".
	if amp := strings.LastIndexByte(head, '&'); amp >= 0 && hard-amp < 6 && !strings.Contains(head[amp:], ";") && amp > 0 {
		hard = amp
		head = s[:hard]
	}
	if lt := strings.LastIndexByte(head, '<'); lt > floor && !strings.Contains(head[lt:], ">") {
		hard = lt
	}
	return hard
}
