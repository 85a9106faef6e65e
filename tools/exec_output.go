package tools

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// headTailBuffer keeps the first and last capBytes bytes of a stream and
// counts its runes, so a command printing gigabytes costs bounded memory
// while the model still sees how it started and how it ended.
type headTailBuffer struct {
	mu       sync.Mutex
	capBytes int
	head     []byte
	tail     []byte // last bytes seen after head filled; trimmed to capBytes lazily
	total    int64
	runes    int64
}

func newHeadTailBuffer(capBytes int) *headTailBuffer {
	return &headTailBuffer{capBytes: capBytes}
}

func (b *headTailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	b.total += int64(n)
	for _, c := range p {
		if !utf8.RuneStart(c) {
			continue
		}
		b.runes++
	}
	if room := b.capBytes - len(b.head); room > 0 {
		take := min(room, len(p))
		b.head = append(b.head, p[:take]...)
		p = p[take:]
	}
	if len(p) > 0 {
		b.tail = append(b.tail, p...)
		if len(b.tail) > 2*b.capBytes {
			b.tail = append(b.tail[:0], b.tail[len(b.tail)-b.capBytes:]...)
		}
	}
	return n, nil
}

// render returns the output plus an optional trailer line (the exit code),
// capped at limit runes: the head and the tail are kept and a marker says
// how many characters were left out in between.
func (b *headTailBuffer) render(limit int, trailer string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	tail := b.tail
	if len(tail) > b.capBytes {
		tail = tail[len(tail)-b.capBytes:]
	}
	complete := int64(len(b.head)+len(tail)) == b.total
	head := string(b.head)
	tailStr := string(tail)
	if complete {
		head, tailStr = head+tailStr, ""
	} else {
		head = trimBrokenEnd(head)
		tailStr = strings.TrimLeftFunc(tailStr, func(r rune) bool { return r == utf8.RuneError })
	}
	total := int(b.runes)
	if trailer != "" {
		end := head
		if !complete {
			end = tailStr
		}
		sep := "\n\n" // a blank line between the output and the exit code
		switch {
		case complete && end == "":
			sep = ""
		case strings.HasSuffix(end, "\n"):
			sep = "\n"
		}
		if complete {
			head += sep + trailer
		} else {
			tailStr += sep + trailer
		}
		total += utf8.RuneCountInString(sep + trailer)
	}
	if complete {
		return capHeadTail(head, head, total, limit)
	}
	return capHeadTail(head, tailStr, total, limit)
}

// capHeadTail keeps at most limit runes of a text of total runes whose
// beginning is head and whose end is tail (the same string when nothing
// was dropped; a text with a dropped middle always exceeds limit), joining
// the two parts with a truncation marker.
func capHeadTail(head, tail string, total, limit int) string {
	if total <= limit {
		return head
	}
	// Size the marker for the largest possible count so the result never exceeds limit.
	markerLen := utf8.RuneCountInString(truncationMarker(total))
	keep := max(limit-markerLen, 0)
	headN := keep / 2
	tailN := keep - headN
	h := firstRunes(head, headN)
	t := lastRunes(tail, tailN)
	omitted := total - utf8.RuneCountInString(h) - utf8.RuneCountInString(t)
	return h + truncationMarker(omitted) + t
}

// truncationMarker is nanobot's "... (N chars truncated) ..." separator.
func truncationMarker(n int) string {
	return fmt.Sprintf("\n\n... (%s chars truncated) ...\n\n", thousands(n))
}

// thousands formats n with comma separators, as Python's "{:,}".
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var sb strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			sb.WriteByte(',')
		}
		sb.WriteRune(c)
	}
	if neg {
		return "-" + sb.String()
	}
	return sb.String()
}

func firstRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

func lastRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	end := len(s)
	for i := 0; i < n && end > 0; i++ {
		_, size := utf8.DecodeLastRuneInString(s[:end])
		end -= size
	}
	return s[end:]
}

// trimBrokenEnd drops an incomplete UTF-8 sequence cut at the end of s.
func trimBrokenEnd(s string) string {
	for cut := 1; cut < utf8.UTFMax && cut <= len(s); cut++ {
		if utf8.RuneStart(s[len(s)-cut]) {
			if !utf8.FullRuneInString(s[len(s)-cut:]) {
				return s[:len(s)-cut]
			}
			break
		}
	}
	return s
}
