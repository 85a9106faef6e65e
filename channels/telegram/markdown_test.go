package telegram

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestToHTML(t *testing.T) {
	cases := []struct {
		name, md, want string
	}{
		{"plain", "hello world", "hello world"},
		{"escaping", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"html in text is text", "<b>not bold</b>", "&lt;b&gt;not bold&lt;/b&gt;"},
		{"bold", "this is **bold** text", "this is <b>bold</b> text"},
		{"bold underscores", "__bold__", "<b>bold</b>"},
		{"italic star", "an *italic* word", "an <i>italic</i> word"},
		{"italic underscore", "an _italic_ word", "an <i>italic</i> word"},
		{"bold italic", "***both***", "<b><i>both</i></b>"},
		{"snake_case stays", "call my_var_name now", "call my_var_name now"},
		{"lone star", "2 * 3 = 6", "2 * 3 = 6"},
		{"unclosed bold", "**open without close", "**open without close"},
		{"strike", "~~gone~~", "<s>gone</s>"},
		{"inline code escapes", "run `a<b && c` now", "run <code>a&lt;b &amp;&amp; c</code> now"},
		{"inline code keeps markers", "`**not bold**`", "<code>**not bold**</code>"},
		{"double backtick code", "``a ` b``", "<code>a ` b</code>"},
		{"pre with language", "```go\nfmt.Println(\"<hi>\")\n```", `<pre><code class="language-go">fmt.Println("&lt;hi&gt;")</code></pre>`},
		{"pre without language", "```\nx := 1\n```", "<pre>x := 1</pre>"},
		{"pre keeps markdown", "```\n**raw** _x_\n```", "<pre>**raw** _x_</pre>"},
		{"unclosed fence runs to end", "```py\nprint(1)", `<pre><code class="language-py">print(1)</code></pre>`},
		{"tilde fence", "~~~\ncode\n~~~", "<pre>code</pre>"},
		{"link", "see [the docs](https://example.org/a?b=1&c=2)", `see <a href="https://example.org/a?b=1&amp;c=2">the docs</a>`},
		{"link with bold text", "[**big**](https://x.org)", `<a href="https://x.org"><b>big</b></a>`},
		{"link with parens", "[wiki](https://en.wikipedia.org/wiki/Go_(game))", `<a href="https://en.wikipedia.org/wiki/Go_(game)">wiki</a>`},
		{"unsafe link is text", "[x](javascript:alert(1))", "x (javascript:alert(1))"},
		{"autolink", "<https://example.org>", "https://example.org"},
		{"heading", "# Title", "<b>Title</b>"},
		{"heading level 3 with emphasis", "### A *nice* one", "<b>A <i>nice</i> one</b>"},
		{"bullets", "- one\n* two\n  + nested", "• one\n• two\n  • nested"},
		{"ordered", "1. first\n2) second", "1. first\n2. second"},
		{"list with bold", "- **key**: value", "• <b>key</b>: value"},
		{"blockquote", "> quoted **text**\n> more", "<blockquote>quoted <b>text</b>\nmore</blockquote>"},
		{"rule", "above\n---\nbelow", "above\n──────────\nbelow"},
		{"nested bold in italic", "*a **b** c*", "<i>a <b>b</b> c</i>"},
		{"escaped marker", `\*not italic\*`, "*not italic*"},
		{"table", "| a | bb |\n|---|---|\n| ccc | d |", "<pre>a    bb\n───  ──\nccc  d</pre>"},
		{"pipe line without separator", "| just | text |", "| just | text |"},
		{"multibyte", "**héllo** 🐈 <x>", "<b>héllo</b> 🐈 &lt;x&gt;"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, ToHTML(c.md))
		})
	}
}

// TestToHTMLBalanced: whatever the input, every tag opened is closed in
// order, which is what Telegram's parser demands.
func TestToHTMLBalanced(t *testing.T) {
	inputs := []string{
		"**a *b** c*", "_a **b_ c**", "~~**x~~**", "[a](https://x) **[b](https://y)", "```\n**", "*", "**", "***", "`", "[", "[]()",
		"> **q\n> r**", "- *a\n- b*", "# **h", "a_b_c _d_ e_", "<i>**x**</i>",
	}
	for _, in := range inputs {
		out := ToHTML(in)
		require.NoError(t, balanced(out), "input %q gave %q", in, out)
	}
}

// balanced checks that the tags of s nest properly.
func balanced(s string) error {
	var stack []string
	for i := 0; i < len(s); i++ {
		if s[i] != '<' {
			continue
		}
		end := strings.IndexByte(s[i:], '>')
		if end < 0 {
			return fmt.Errorf("unterminated tag at %d", i)
		}
		tag := s[i+1 : i+end]
		i += end
		if strings.HasPrefix(tag, "/") {
			if len(stack) == 0 || stack[len(stack)-1] != tag[1:] {
				return fmt.Errorf("closing %s does not match %v", tag, stack)
			}
			stack = stack[:len(stack)-1]
			continue
		}
		name, _, _ := strings.Cut(tag, " ")
		stack = append(stack, name)
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed %v", stack)
	}
	return nil
}

// FuzzToHTML: no input makes tags Telegram cannot parse (go test runs the
// seeds; go test -fuzz=FuzzToHTML explores).
func FuzzToHTML(f *testing.F) {
	for _, s := range []string{"**a *b** c*", "```go\nx\n", "[a](https://x) _b_ ~~c~~ `d`", "> q\n- l\n1. o\n# h", "| a | b |\n|---|---|\n| c | d |"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		out := ToHTML(md)
		if err := balanced(out); err != nil {
			t.Fatalf("%q → %q: %v", md, out, err)
		}
		if utf8.ValidString(md) && !utf8.ValidString(out) {
			t.Fatalf("%q → invalid UTF-8 %q", md, out)
		}
	})
}
