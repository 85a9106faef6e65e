package markdown

import (
	"strings"
	"unicode/utf8"
)

// fenceRoom is kept free at the end of a piece to close a code fence cut there.
const fenceRoom = 8

// Split cuts text (Markdown, or a platform's rendering of it) into pieces
// of at most limit runes for a platform's message limit. It cuts at a
// paragraph break in the second half of a piece if there is one, else at
// a line break, else at a space, else between runes (never inside an
// escape such as &amp; or a <link>). A cut inside a ``` or ~~~ code fence
// closes the fence at the end of the piece and opens it again, with its
// language, at the start of the next, so each piece renders on its own.
// Only whitespace is lost at a cut; text of whitespace alone gives no
// pieces. A limit below 1 counts as 1.
func Split(text string, limit int) []string {
	limit = max(limit, 1)
	rest := trimLeadingBlankLines(strings.TrimRight(text, " \t\n"))
	var out []string
	for rest != "" {
		if utf8.RuneCountInString(rest) <= limit {
			out = append(out, rest)
			break
		}
		c := cut(rest, limit)
		piece := strings.TrimRight(rest[:c.at], " \t\n")
		next := rest[c.at+c.skip:]
		if c.space {
			next = strings.TrimLeft(next, " \t")
		}
		next = trimLeadingBlankLines(next)
		if c.fence != nil && next != "" {
			piece, next = closeFence(piece, next, c.fence, limit)
		}
		if strings.TrimSpace(piece) != "" {
			out = append(out, piece)
		}
		rest = next
	}
	return out
}

// closeFence ends piece in fence f: with f's own closing line if next starts with it, else reopening f in next.
func closeFence(piece, next string, f *fenceLine, limit int) (string, string) {
	first, after, _ := strings.Cut(next, "\n")
	if closing := strings.TrimSpace(first); f.closes(first) &&
		utf8.RuneCountInString(piece)+1+utf8.RuneCountInString(closing) <= limit {
		return piece + "\n" + closing, trimLeadingBlankLines(after)
	}
	return piece + "\n" + f.marker, f.line + "\n" + next
}

// cutPoint is where a piece ends: it keeps s[:at], drops s[at:at+skip], closes fence if set.
type cutPoint struct {
	at, skip int
	space    bool
	fence    *fenceLine
}

// cut chooses where the first piece of s ends.
func cut(s string, limit int) cutPoint {
	budget := limit - min(fenceRoom, limit/2)
	for {
		c := boundary(s, budget)
		c.fence = openFenceAt(s, c.at)
		if c.fence == nil {
			return c
		}
		closing := 1 + utf8.RuneCountInString(c.fence.marker)
		if !c.fence.reopenable(limit) {
			c.fence = nil // too long to repeat: the piece is cut as text
			return c
		}
		if utf8.RuneCountInString(strings.TrimRight(s[:c.at], " \t\n"))+closing <= limit {
			return c
		}
		budget = limit - closing // a fence longer than fenceRoom: cut earlier
	}
}

// boundary finds the best cut in the first budget runes of s.
func boundary(s string, budget int) cutPoint {
	hard := byteIndexOfRune(s, budget)
	head := s[:hard]
	half := byteIndexOfRune(s, budget/2)
	for _, floor := range []int{half, 1} {
		for _, sep := range []string{"\n\n", "\n", " "} {
			for i := strings.LastIndex(head, sep); i >= floor; i = strings.LastIndex(head[:i], sep) {
				if sep == " " && insideFenceLine(s, i) {
					continue // a fence's info string is not cut off its fence
				}
				if usefulCut(s, i) {
					return cutPoint{at: i, skip: len(sep), space: sep == " "}
				}
			}
		}
	}
	if at := hardCut(s, hard, half); usefulCut(s, at) {
		return cutPoint{at: at}
	}
	return cutPoint{at: hard}
}

// usefulCut: a piece of nothing but a fence's opening line would come back forever.
func usefulCut(s string, i int) bool {
	f := openFenceAt(s, i)
	if f == nil {
		return strings.TrimSpace(s[:i]) != ""
	}
	return strings.TrimSpace(s[f.end:i]) != ""
}

// hardCut moves a cut between runes back out of an escape (&amp;) or a <url|label>.
func hardCut(s string, hard, floor int) int {
	if amp := strings.LastIndexByte(s[:hard], '&'); amp > 0 && hard-amp < 10 {
		if semi := strings.IndexByte(s[amp:], ';'); semi > hard-amp && semi < 10 && !strings.ContainsAny(s[amp+1:amp+semi], " \n<&") {
			return amp
		}
	}
	if lt := strings.LastIndexByte(s[:hard], '<'); lt > floor && !strings.Contains(s[lt:hard], ">") {
		return lt
	}
	return hard
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

// trimLeadingBlankLines drops blank lines but keeps the next line's indent, which means something.
func trimLeadingBlankLines(s string) string {
	for {
		nl := strings.IndexByte(s, '\n')
		if nl < 0 || strings.TrimSpace(s[:nl]) != "" {
			if strings.TrimSpace(s) == "" {
				return ""
			}
			return s
		}
		s = s[nl+1:]
	}
}
