package markdown

import (
	"strings"
	"unicode/utf8"
)

// fenceLine is a code fence's opening line as Split reads it.
type fenceLine struct {
	marker string // the run of ` or ~ that opens it, and closes it
	line   string // what reopens it in the next piece: the marker and language
	end    int    // where its line ends in the text scanned
}

// openingFence reads line as CommonMark's fence opening: ≤3 spaces, ≥3 ` or ~, an info string.
func openingFence(line string) *fenceLine {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return nil
	}
	n := len(t) - len(strings.TrimLeft(t, t[:1]))
	if n < 3 {
		return nil
	}
	info := strings.TrimSpace(t[n:])
	if t[0] == '`' && strings.Contains(info, "`") {
		return nil
	}
	f := &fenceLine{marker: t[:n], line: t[:n]}
	if lang, _, _ := strings.Cut(info, " "); langRe.MatchString(lang) {
		f.line += lang
	}
	return f
}

// closes reports line closing f: a run of f's character at least as long, and spaces.
func (f *fenceLine) closes(line string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	t = strings.TrimRight(t, " \t")
	return len(t) >= len(f.marker) && strings.Trim(t, f.marker[:1]) == ""
}

// reopenable: a piece of limit runes must have room to reopen f and still carry code.
func (f *fenceLine) reopenable(limit int) bool {
	return utf8.RuneCountInString(f.line)+1 <= limit/4 && 1+len(f.marker) <= limit/2
}

// openFenceAt is the fence open at byte at of s, from the lines that end by then.
func openFenceAt(s string, at int) *fenceLine {
	var open *fenceLine
	for start := 0; start < at; {
		end := strings.IndexByte(s[start:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		if end > at {
			break // the line the cut falls in is not whole
		}
		line := s[start:end]
		switch {
		case open == nil:
			if open = openingFence(line); open != nil {
				open.end = end
			}
		case open.closes(line):
			open = nil
		}
		start = end + 1
	}
	return open
}

// insideFenceLine: a fence line is not cut, or its info string would become code.
func insideFenceLine(s string, i int) bool {
	start := strings.LastIndexByte(s[:i], '\n') + 1
	end := strings.IndexByte(s[i:], '\n')
	if end < 0 {
		end = len(s)
	} else {
		end += i
	}
	return openingFence(s[start:end]) != nil // a closing line reads as an opening too
}
