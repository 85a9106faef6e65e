package markdown

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSlackMrkdwn(t *testing.T) {
	checkRender(t, SlackMrkdwn, []renderCase{
		{"plain", "hello world", "hello world"},
		{"bold", "this is **bold** text", "this is *bold* text"},
		{"bold underscores", "this is __bold__ text", "this is *bold* text"},
		{"bold underscores then period", "it is __done__.", "it is *done*."},
		{"snake_case stays", "call my_func_name now", "call my_func_name now"},
		{"dunder is bold, as CommonMark reads it", "see __init__.py", "see *init*.py"},
		{"dunder in code stays", "see `__init__.py`", "see `__init__.py`"},
		{"italic star", "this is *italic* text", "this is _italic_ text"},
		{"italic underscore", "this is _italic_ text", "this is _italic_ text"},
		{"bold italic", "***both***", "_*both*_"},
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
		{"setext heading", "above\n---\nbelow", "*above*\nbelow"},
		{"rule", "above\n\n---\n\nbelow", "above\n\n──────────\n\nbelow"},
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
		{"nested quote", "> > inner\n>\n> outer", "> > inner\n>\n> outer"},
		{"quote in a list", "* > quoted", "• &gt; quoted"},
		{"empty link label", "[](https://x.org)", "<https://x.org>"},
		{"entities", "&copy; &#60;b&#62; &bogus;", "© &lt;b&gt; &amp;bogus;"},
		{"html block is text", "<div>\n<b>x</b>\n</div>", "&lt;div&gt;\n&lt;b&gt;x&lt;/b&gt;\n&lt;/div&gt;"},
		{"email autolink", "<a@b.co>", "<mailto:a@b.co|a@b.co>"},
		{"channel kept", "see <#C0123|general>", "see <#C0123|general>"},
		{"indented code", "    a < b", "```\na &lt; b\n```"},
		{"unclosed bold", "**open", "**open"},
	})
}

// FuzzSlackMrkdwn: any Markdown converts without a panic to valid UTF-8;
// no raw <, > or & (Slack's control characters) leaks through outside a
// <…> the converter made or a mention it kept, and with no brackets in
// the input there is no <…> at all.
func FuzzSlackMrkdwn(f *testing.F) {
	for _, s := range []string{"**a *b** c*", "```go\nx\n", "[a](https://x) _b_ ~~c~~ `d`", "> q\n- l\n1. o\n# h", "| a | b |\n|---|---|\n| c | d |", "<@U123> & <!here>",
		"[a|b](https://x?a=1&b=<2>) <https://y> ![i](z) <#C1|gen>", "- [x] **t**\n  - *n*\n\n---\n&amp; &#60;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		out := SlackMrkdwn(md)
		if !utf8.ValidString(out) {
			t.Fatalf("%q → invalid UTF-8 %q", md, out)
		}
		if err := slackValid(out); err != nil {
			t.Fatalf("%q → %q: %v", md, out, err)
		}
		if !strings.ContainsAny(md, "[]()<>") && strings.ContainsAny(out, "<>") {
			t.Fatalf("%q → %q: a raw angle bracket", md, out)
		}
	})
}

// slackValid checks that every < opens a <…> closed before the next < or
// line end, that no > stands alone, and that & only starts an escape.
func slackValid(s string) error {
	open := -1
	for i := 0; i < len(s); i++ {
		if i == 0 || s[i-1] == '\n' {
			for strings.HasPrefix(s[i:], ">") { // a quote's marks
				i += len(">")
				i += len(s[i:]) - len(strings.TrimPrefix(s[i:], " "))
			}
			if i >= len(s) {
				break
			}
		}
		switch c := s[i]; {
		case c == '<' && open >= 0, c == '\n' && open >= 0:
			return fmt.Errorf("<…> at %d not closed", open)
		case c == '<':
			open = i
		case c == '>' && open < 0:
			return fmt.Errorf("raw > at %d", i)
		case c == '>':
			open = -1
		case c == '&' && !hasEntity(s[i:]):
			return fmt.Errorf("raw & at %d", i)
		}
	}
	if open >= 0 {
		return fmt.Errorf("<…> at %d not closed", open)
	}
	return nil
}
