package telegram

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
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
	pieces := Split(text, MaxMessageRunes)
	require.Greater(t, len(pieces), 3)
	for _, p := range pieces {
		require.LessOrEqual(t, utf8.RuneCountInString(p), MaxMessageRunes)
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
		_, _, open := openFenceAtEnd(p)
		require.False(t, open, "piece %d leaves a fence open:\n%s", i, p)
		require.NoError(t, balanced(ToHTML(p)))
	}
	require.True(t, strings.HasPrefix(pieces[1], "```go\n"), pieces[1])
	require.Contains(t, ToHTML(pieces[1]), `<pre><code class="language-go">line of code`)
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
