package markdown

import (
	"strconv"
	"strings"
	"unicode/utf16"
)

// Signal renders Markdown as Signal shows it: plain text plus text styles,
// signal-cli's "start:length:STYLE" ranges in UTF-16 units (bold, italic,
// strikethrough, monospace for code); links as "label (url)", headings
// bold, tables as aligned monospace columns, as nanobot does.
func Signal(md string) (text string, styles []string) {
	return signalStyles(render(md, signalFlavor))
}

// The styles Signal knows, and the private-use runes the flavour marks
// them with before they are measured: opening i is signalMark+i, closing
// signalMark+16+i.
var signalStyleNames = [...]string{"BOLD", "ITALIC", "STRIKETHROUGH", "MONOSPACE"}

const signalMark = '\uE000'

func signalMarks(i int) [2]string {
	return [2]string{string(rune(signalMark + i)), string(rune(signalMark + 16 + i))}
}

func signalWrap(i int, s string) string { m := signalMarks(i); return m[0] + s + m[1] }

var signalFlavor = &flavor{
	text:        stripSignalMarks,
	bold:        signalMarks(0),
	italic:      signalMarks(1),
	strike:      signalMarks(2),
	code:        func(s string) string { return signalWrap(3, stripSignalMarks(s)) },
	link:        plainLink,
	image:       plainLink,
	autolink:    func(_, label string, _ bool) string { return label },
	html:        stripSignalMarks,
	heading:     func(_ int, inner string) string { return signalWrap(0, inner) },
	boldHeading: true,
	fence:       func(_, code string) string { return signalWrap(3, stripSignalMarks(code)) },
	quote:       func(body string, _ int, _ bool) string { return prefixLines(body, "> ") },
	rule:        rule,
	table:       func(l *layout, t *table) string { return signalWrap(3, t.aligned(l)) },
	bullet:      func(int) string { return "• " },
	number:      dotted,
	task:        bracketTask,
}

// stripSignalMarks keeps the model's own text from opening a style.
func stripSignalMarks(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= signalMark && r < signalMark+32 {
			return -1
		}
		return r
	}, s)
}

// signalStyles takes the marks out of marked and measures the ranges they enclosed.
func signalStyles(marked string) (string, []string) {
	var b strings.Builder
	var styles []string
	var open [len(signalStyleNames)][]int // the offsets each style was opened at
	at := 0
	for _, r := range marked {
		switch i := int(r - signalMark); {
		case i >= 0 && i < len(signalStyleNames):
			open[i] = append(open[i], at)
		case i >= 16 && i < 16+len(signalStyleNames):
			if s := open[i-16]; len(s) > 0 {
				start := s[len(s)-1]
				open[i-16] = s[:len(s)-1]
				if at > start {
					styles = append(styles, strconv.Itoa(start)+":"+strconv.Itoa(at-start)+":"+signalStyleNames[i-16])
				}
			}
		default:
			b.WriteRune(r)
			at += len(utf16.Encode([]rune{r}))
		}
	}
	return b.String(), styles
}
