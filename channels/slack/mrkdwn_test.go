package slack

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToMrkdwn(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "hello world", "hello world"},
		{"bold", "this is **bold** text", "this is *bold* text"},
		{"bold underscores", "this is __bold__ text", "this is *bold* text"},
		{"bold underscores then period", "it is __done__.", "it is *done*."},
		{"snake_case stays", "call my_func_name now", "call my_func_name now"},
		{"dunder stays", "see __init__.py", "see __init__.py"},
		{"italic star", "this is *italic* text", "this is _italic_ text"},
		{"italic underscore", "this is _italic_ text", "this is _italic_ text"},
		{"bold italic", "***both***", "*_both_*"},
		{"two italics", "*a* and *b*", "_a_ and _b_"},
		{"bold then italic", "**a** *b*", "*a* _b_"},
		{"arithmetic stars", "2 * 3 * 4 = 24", "2 * 3 * 4 = 24"},
		{"strike", "~~gone~~ here", "~gone~ here"},
		{"inline code", "run `ls -la` now", "run `ls -la` now"},
		{"code keeps stars", "`**not bold**`", "`**not bold**`"},
		{"code escapes", "`a < b && c`", "`a &lt; b &amp;&amp; c`"},
		{"escapes", "a < b & c > d", "a &lt; b &amp; c &gt; d"},
		{"broadcast escaped", "hi <!channel>", "hi &lt;!channel&gt;"},
		{"user mention kept", "thanks <@U0123ABC>", "thanks <@U0123ABC>"},
		{"link", "see [the docs](https://example.com/docs)", "see <https://example.com/docs|the docs>"},
		{"link with title", `[x](https://e.com "Title")`, "<https://e.com|x>"},
		{"link ampersand", "[q](https://e.com/?a=1&b=2)", "<https://e.com/?a=1&amp;b=2|q>"},
		{"link with parens", "[wiki](https://en.wikipedia.org/wiki/Go_(language))", "<https://en.wikipedia.org/wiki/Go_(language)|wiki>"},
		{"link bold label", "[**big**](https://e.com)", "<https://e.com|*big*>"},
		{"link pipe label", "[a|b](https://e.com)", "<https://e.com|a¦b>"},
		{"relative link", "[readme](docs/README.md)", "readme (docs/README.md)"},
		{"image", "![a cat](https://e.com/cat.png)", "<https://e.com/cat.png|a cat>"},
		{"autolink", "<https://e.com/x>", "<https://e.com/x>"},
		{"bare url underscores", "go to https://e.com/a_b_c_d now", "go to https://e.com/a_b_c_d now"},
		{"bare url then period", "at https://e.com/x.", "at https://e.com/x."},
		{"heading", "# Title", "*Title*"},
		{"heading h3 bold inside", "### A **big** deal", "*A big deal*"},
		{"heading closing hashes", "## Done ##", "*Done*"},
		{"not a heading", "#hashtag", "#hashtag"},
		{"bullets", "- one\n* two\n+ three", "• one\n• two\n• three"},
		{"nested bullet", "- top\n  - inner", "• top\n  ◦ inner"},
		{"bullet with bold", "- **key**: value", "• *key*: value"},
		{"tasks", "- [ ] todo\n- [x] done", "☐ todo\n☑ done"},
		{"ordered", "1. first\n2) second", "1. first\n2. second"},
		{"quote", "> wise words", "> wise words"},
		{"quote with bold", "> **note** this", "> *note* this"},
		{"rule", "above\n---\nbelow", "above\n──────────\nbelow"},
		{"fence", "```go\nfmt.Println(\"<hi>\")\n```", "```\nfmt.Println(\"&lt;hi&gt;\")\n```"},
		{"fence keeps markdown", "```\n**x** # y\n- z\n```", "```\n**x** # y\n- z\n```"},
		{"unclosed fence", "```\ncode *x*", "```\ncode *x*\n```"},
		{"tilde fence", "~~~\na\n~~~", "```\na\n```"},
		{
			"table",
			"| Name | Age |\n|------|----:|\n| Ann | 31 |\n| **Bob** | |",
			"*Name*: Ann · *Age*: 31\n*Name*: *Bob*",
		},
		{"table no rows", "| A | B |\n|---|---|", "*A* · *B*"},
		{"pipes are not a table", "a | b\nc | d", "a | b\nc | d"},
		{"blank lines kept", "a\n\nb", "a\n\nb"},
		{"crlf", "a\r\nb", "a\nb"},
		{"empty", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, ToMrkdwn(c.in))
		})
	}
}

func TestSplit(t *testing.T) {
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
		parts := Split(text, MaxMessageLen)
		require.Len(t, parts, 3)
		for _, p := range parts {
			require.LessOrEqual(t, utf8.RuneCountInString(p), MaxMessageLen)
		}
	})
}

// FuzzToMrkdwn: any Markdown converts without a panic, valid UTF-8 stays
// valid, and no raw <, > or & (Slack's control characters) leaks through
// outside a link the converter made.
func FuzzToMrkdwn(f *testing.F) {
	for _, s := range []string{"**a *b** c*", "```go\nx\n", "[a](https://x) _b_ ~~c~~ `d`", "> q\n- l\n1. o\n# h", "| a | b |\n|---|---|\n| c | d |", "<@U123> & <!here>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		out := ToMrkdwn(md)
		if utf8.ValidString(md) && !utf8.ValidString(out) {
			t.Fatalf("%q → invalid UTF-8 %q", md, out)
		}
		if !strings.ContainsAny(md, "[]()<>") && strings.ContainsAny(out, "<>") {
			t.Fatalf("%q → %q: a raw angle bracket", md, out)
		}
	})
}
