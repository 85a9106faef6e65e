package markdown

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// The platforms' limits, as channels/telegram and channels/slack split at.
const (
	telegramLimit = 4000
	slackLimit    = 39_000
)

func TestSplitShortIsOnePiece(t *testing.T) {
	require.Equal(t, []string{"hello"}, Split("hello", 10))
	require.Nil(t, Split("\n\n", 10))
}

func TestSplitPrefersParagraphThenLineThenSpace(t *testing.T) {
	cases := []struct {
		name, text string
		limit      int
		want       []string
	}{
		{"paragraph", "aaaa aaaa aaaa\n\nbbbb bbbb bbbb bbbb", 30, []string{"aaaa aaaa aaaa", "bbbb bbbb bbbb bbbb"}},
		{"line", "aaaa aaaa aaaa\nbbbb bbbb bbbb bbbb", 30, []string{"aaaa aaaa aaaa", "bbbb bbbb bbbb bbbb"}},
		{"space", "aaaa bbbb cccc dddd eeee ffff gggg", 30, []string{"aaaa bbbb cccc dddd", "eeee ffff gggg"}},
		{"hard cut", strings.Repeat("x", 35), 30, []string{strings.Repeat("x", 22), strings.Repeat("x", 13)}},
		{"paragraph too early, line wins", "a\n\n" + strings.Repeat("b", 18) + "\n" + strings.Repeat("c", 12), 30,
			[]string{"a\n\n" + strings.Repeat("b", 18), strings.Repeat("c", 12)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, Split(c.text, c.limit))
		})
	}
}

func TestSplitKeepsEveryWordAndLimit(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		b.WriteString("wörd ")
		if i%17 == 0 {
			b.WriteString("\n")
		}
		if i%101 == 0 {
			b.WriteString("\n\n")
		}
	}
	text := b.String()
	pieces := Split(text, telegramLimit)
	require.Greater(t, len(pieces), 3)
	for _, p := range pieces {
		require.LessOrEqual(t, utf8.RuneCountInString(p), telegramLimit)
		require.True(t, utf8.ValidString(p))
	}
	require.Equal(t, strings.Fields(text), strings.Fields(strings.Join(pieces, " ")))
}

// TestSplitReopensCodeFence: a cut inside a fenced block closes it and
// opens it again, so both pieces render as code.
func TestSplitReopensCodeFence(t *testing.T) {
	var code strings.Builder
	for i := 0; i < 40; i++ {
		code.WriteString("line of code\n")
	}
	text := "intro\n```go\n" + code.String() + "```\nafter"
	pieces := Split(text, 200)
	require.Greater(t, len(pieces), 2)
	for i, p := range pieces {
		require.LessOrEqual(t, utf8.RuneCountInString(p), 200, "piece %d", i)
		require.False(t, leavesFenceOpen(p), "piece %d leaves a fence open:\n%s", i, p)
		require.NoError(t, telegramValid(TelegramHTML(p)))
	}
	require.True(t, strings.HasPrefix(pieces[1], "```go\n"), pieces[1])
	require.Contains(t, TelegramHTML(pieces[1]), `<pre><code class="language-go">line of code`)
	require.Equal(t, 40, strings.Count(strings.Join(pieces, "\n"), "line of code"))
}

func TestSplitFenceWithoutBreaks(t *testing.T) {
	text := "```\n" + strings.Repeat("y", 500) + "\n```"
	pieces := Split(text, 100)
	for _, p := range pieces {
		require.LessOrEqual(t, utf8.RuneCountInString(p), 100)
	}
	require.Equal(t, 500, strings.Count(strings.Join(pieces, ""), "y"))
}

// TestSplitSlack: the cases of the splitter channels/slack had.
func TestSplitSlack(t *testing.T) {
	t.Run("short text is one part", func(t *testing.T) {
		require.Equal(t, []string{"hello"}, Split("hello", 100))
	})
	t.Run("cuts at paragraphs and stays under the limit", func(t *testing.T) {
		para := strings.Repeat("word ", 30) // 150 chars
		text := strings.Repeat(para+"\n\n", 10)
		parts := Split(text, 400)
		require.Greater(t, len(parts), 1)
		for _, p := range parts {
			require.LessOrEqual(t, utf8.RuneCountInString(p), 400)
			require.False(t, strings.HasPrefix(p, "\n") || strings.HasSuffix(p, "\n"), "part %q", p)
		}
		require.Equal(t, strings.Fields(text), strings.Fields(strings.Join(parts, " ")), "no word lost or cut")
	})
	t.Run("counts characters, not bytes", func(t *testing.T) {
		text := strings.Repeat("é", 250)
		parts := Split(text, 100)
		for _, p := range parts {
			require.LessOrEqual(t, utf8.RuneCountInString(p), 100)
			require.True(t, utf8.ValidString(p))
		}
		require.Equal(t, text, strings.Join(parts, ""))
	})
	t.Run("a code block cut in two is closed and reopened", func(t *testing.T) {
		code := "```\n" + strings.Repeat("line of code\n", 40) + "```"
		parts := Split(code, 200)
		require.Greater(t, len(parts), 1)
		for _, p := range parts {
			require.LessOrEqual(t, utf8.RuneCountInString(p), 200)
			require.Equal(t, 0, strings.Count(p, "```")%2, "part has an unbalanced fence: %q", p)
			require.True(t, strings.HasPrefix(p, "```\n"), "part %q", p)
		}
	})
	t.Run("never inside an escape or a link", func(t *testing.T) {
		text := strings.Repeat("x", 97) + "&amp;" + strings.Repeat("y", 50)
		parts := Split(text, 100+fenceRoom)
		require.Equal(t, strings.Repeat("x", 97), parts[0])
		require.True(t, strings.HasPrefix(parts[1], "&amp;"))
		text = strings.Repeat("x", 80) + "<https://e.com/abcdefghijkl|link>" + strings.Repeat("y", 50)
		parts = Split(text, 100+fenceRoom)
		require.Equal(t, strings.Repeat("x", 80), parts[0])
		require.True(t, strings.HasPrefix(parts[1], "<https://e.com/abcdefghijkl|link>"))
	})
	t.Run("the Slack limit", func(t *testing.T) {
		text := strings.Repeat("a sentence of words. ", 4000) // 84 000 chars
		parts := Split(text, slackLimit)
		require.Len(t, parts, 3)
		for _, p := range parts {
			require.LessOrEqual(t, utf8.RuneCountInString(p), slackLimit)
		}
	})
}

func TestSplitNothingToSay(t *testing.T) {
	for _, s := range []string{"", " ", "\n\n", " \t\n  \n"} {
		require.Nil(t, Split(s, 10), "%q", s)
	}
}

// TestSplitFence: the language comes back with the fence, a fence's own
// closing line ends a piece when it comes right after the cut, and the
// indent of the line after a cut is kept.
func TestSplitFence(t *testing.T) {
	text := "```python\n" + strings.Repeat("x = 1\n", 12) + "```\nafter"
	pieces := Split(text, 40)
	for i, p := range pieces {
		require.LessOrEqual(t, utf8.RuneCountInString(p), 40)
		require.False(t, leavesFenceOpen(p), "piece %d: %q", i, p)
		if i > 0 && i < len(pieces)-1 {
			require.True(t, strings.HasPrefix(p, "```python\n"), "piece %d: %q", i, p)
		}
	}
	require.Equal(t, 12, strings.Count(strings.Join(pieces, "\n"), "x = 1"))

	exact := "```\n" + strings.Repeat("y", 20) + "\n```\n" + strings.Repeat("z ", 10)
	require.Equal(t, []string{"```\n" + strings.Repeat("y", 20) + "\n```", strings.TrimSpace(strings.Repeat("z ", 10))}, Split(exact, 33))

	require.Equal(t, []string{"- item one", "  - nested item"}, Split("- item one\n  - nested item", 20))
}

func TestSplitNeverCutsARune(t *testing.T) {
	text := strings.Repeat("日本語🐈", 50)
	for _, limit := range []int{1, 2, 3, 7, 10, 99} {
		pieces := Split(text, limit)
		for _, p := range pieces {
			require.True(t, utf8.ValidString(p))
			require.LessOrEqual(t, utf8.RuneCountInString(p), limit)
		}
		require.Equal(t, text, strings.Join(pieces, ""), "limit %d", limit)
	}
}

// FuzzSplit: every piece is within the limit, valid UTF-8 stays valid, no
// piece is blank, the pieces say what the text said (but for whitespace
// and the fence lines added at cuts), and with room for it no piece but
// the last leaves a code fence open.
func FuzzSplit(f *testing.F) {
	f.Add("aaaa aaaa aaaa\n\nbbbb bbbb bbbb bbbb", 30)
	f.Add("intro\n```go\n"+strings.Repeat("line of code\n", 20)+"```\nafter", 80)
	f.Add("```\n"+strings.Repeat("y", 300)+"\n```", 64)
	f.Add(strings.Repeat("x", 97)+"&amp;"+strings.Repeat("y", 50), 108)
	f.Add("~~~~ sh\n$ a\n~~~\n$ b\n~~~~~\n\n```\n``` not closed", 12)
	f.Add(strings.Repeat("wörd ", 100), 7)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		limit = 1 + int(uint(limit)%400)
		pieces := Split(text, limit)
		if strings.TrimSpace(text) == "" && pieces != nil {
			t.Fatalf("blank %q gave %q", text, pieces)
		}
		for i, p := range pieces {
			if n := utf8.RuneCountInString(p); n > limit {
				t.Fatalf("piece %d has %d runes, over %d: %q", i, n, limit, p)
			}
			if strings.TrimSpace(p) == "" {
				t.Fatalf("piece %d is blank: %q", i, pieces)
			}
			if utf8.ValidString(text) && !utf8.ValidString(p) {
				t.Fatalf("piece %d is not valid UTF-8: %q", i, p)
			}
			if i < len(pieces)-1 && limit >= 64 && shortFences(text, 15) && leavesFenceOpen(p) {
				t.Fatalf("piece %d of %q leaves a fence open: %q", i, text, pieces)
			}
		}
		if !rejoins(text, pieces) {
			t.Fatalf("%q at %d does not rejoin from %q", text, limit, pieces)
		}
	})
}

// leavesFenceOpen reads s as CommonMark does its fences, on its own.
func leavesFenceOpen(s string) bool {
	var marker string
	for _, line := range strings.Split(s, "\n") {
		run, t := fenceRun(line)
		switch {
		case run < 3:
		case marker == "":
			if t[0] != '`' || !strings.Contains(t[run:], "`") {
				marker = t[:run]
			}
		case t[0] == marker[0] && run >= len(marker) && strings.TrimSpace(t[run:]) == "":
			marker = ""
		}
	}
	return marker != ""
}

// fenceRun is the length of the ` or ~ run a line starts with, after up
// to three spaces, and the line from there.
func fenceRun(line string) (int, string) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || t == "" || (t[0] != '`' && t[0] != '~') {
		return 0, t
	}
	return len(t) - len(strings.TrimLeft(t, t[:1])), t
}

// shortFences reports every fence-like line of s within n runes.
func shortFences(s string, n int) bool {
	for _, line := range strings.Split(s, "\n") {
		if run, t := fenceRun(line); run >= 3 && utf8.RuneCountInString(strings.TrimSpace(t)) > n {
			return false
		}
	}
	return true
}

// rejoins reports the pieces holding text's non-whitespace content in
// order, once each piece may drop a fence line it starts with (a fence
// opened again) and one it ends with (a fence closed at the cut).
func rejoins(text string, pieces []string) bool {
	want := dropSpace(text)
	at := map[int]bool{0: true}
	for i, p := range pieces {
		variants := []string{p}
		lines := strings.Split(p, "\n")
		if first, _ := fenceRun(lines[0]); i > 0 && first >= 3 {
			variants = append(variants, strings.Join(lines[1:], "\n"))
		}
		if last, _ := fenceRun(lines[len(lines)-1]); i < len(pieces)-1 && last >= 3 && len(lines) > 1 {
			for _, v := range variants {
				variants = append(variants, v[:strings.LastIndexByte(v, '\n')+1])
			}
		}
		next := map[int]bool{}
		for pos := range at {
			for _, v := range variants {
				if v := dropSpace(v); strings.HasPrefix(want[pos:], v) {
					next[pos+len(v)] = true
				}
			}
		}
		at = next
	}
	return at[len(want)]
}

func dropSpace(s string) string {
	return strings.Join(strings.Fields(s), "")
}
