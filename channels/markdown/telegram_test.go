package markdown

import (
	"fmt"
	"regexp"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestTelegramHTML(t *testing.T) {
	checkRender(t, TelegramHTML, []renderCase{
		{"plain", "hello world", "hello world"},
		{"escaping", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"html in text is text", "<b>not bold</b>", "&lt;b&gt;not bold&lt;/b&gt;"},
		{"bold", "this is **bold** text", "this is <b>bold</b> text"},
		{"bold underscores", "__bold__", "<b>bold</b>"},
		{"italic star", "an *italic* word", "an <i>italic</i> word"},
		{"italic underscore", "an _italic_ word", "an <i>italic</i> word"},
		{"bold italic", "***both***", "<i><b>both</b></i>"},
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
		{"setext heading", "above\n---\nbelow", "<b>above</b>\nbelow"},
		{"rule", "above\n\n---\n\nbelow", "above\n\n──────────\n\nbelow"},
		{"nested bold in italic", "*a **b** c*", "<i>a <b>b</b> c</i>"},
		{"escaped marker", `\*not italic\*`, "*not italic*"},
		{"table", "| a | bb |\n|---|---|\n| ccc | d |", "<pre>a    bb\n───  ──\nccc  d</pre>"},
		{"pipe line without separator", "| just | text |", "| just | text |"},
		{"multibyte", "**héllo** 🐈 <x>", "<b>héllo</b> 🐈 &lt;x&gt;"},
		{"nested quote flattened", "> > inner\n>\n> outer", "<blockquote>&gt; inner\n\nouter</blockquote>"},
		{"no code inside a link", "[`code` in a link](https://x.org)", `<a href="https://x.org">code in a link</a>`},
		{"empty link label", "[](https://x.org)", `<a href="https://x.org">https://x.org</a>`},
		{"tasks", "- [ ] todo\n- [x] done", "☐ todo\n☑ done"},
		{"image as link", "![a cat](https://e.com/cat.png)", `<a href="https://e.com/cat.png">a cat</a>`},
		{"aligned table", "| L | R |\n|:--|--:|\n| a | 10 |\n| bbb | 2 |", "<pre>L     R\n───  ──\na    10\nbbb   2</pre>"},
		{"hard breaks", "one  \ntwo\\\nthree", "one\ntwo\nthree"},
		{"entities", "&copy; &#60;b&#62; &bogus;", "© &lt;b&gt; &amp;bogus;"},
		{"html block is text", "<div>\n<b>x</b>\n</div>", "&lt;div&gt;\n&lt;b&gt;x&lt;/b&gt;\n&lt;/div&gt;"},
		{"loose list", "1. a\n\n   para\n\n2. b", "1. a\n\n   para\n\n2. b"},
		{"ordered from 3", "3. three\n4. four", "3. three\n4. four"},
		{"indented code", "    indented <code>", "<pre>indented &lt;code&gt;</pre>"},
		{"tg link", "[me](tg://user?id=1)", `<a href="tg://user?id=1">me</a>`},
		{"bold in a heading", "# **h** x", "<b>h x</b>"},
	})
}

// TestTelegramHTMLBalanced: whatever the input, every tag opened is closed
// in order, which is what Telegram's parser demands.
func TestTelegramHTMLBalanced(t *testing.T) {
	inputs := []string{
		"**a *b** c*", "_a **b_ c**", "~~**x~~**", "[a](https://x) **[b](https://y)", "```\n**", "*", "**", "***", "`", "[", "[]()",
		"> **q\n> r**", "- *a\n- b*", "# **h", "a_b_c _d_ e_", "<i>**x**</i>",
		"> > nested\n> quote", "[`code` in a link](https://x)", "[](https://x)", "![](https://x/a.png)", "- [ ] task",
	}
	for _, in := range inputs {
		out := TelegramHTML(in)
		require.NoError(t, telegramValid(out), "input %q gave %q", in, out)
	}
}

// telegramValid checks s as Telegram's HTML parser would: only the tags
// the renderer may write, nested properly and within Telegram's rules (no
// tag inside code or pre but pre's code, no entity but marks inside a
// link, no quote in a quote), and no <, > or & in text unescaped.
func telegramValid(s string) error {
	return checkTags(s, func(string) bool { return false }, func(tag, name, attr string, stack []string) error {
		inside := func(name string) bool { return slices.Contains(stack, name) }
		switch {
		case !telegramTag.MatchString(tag):
			return fmt.Errorf("tag <%s> is not one Telegram takes", tag)
		case inside("code") || (inside("pre") && (name != "code" || stack[len(stack)-1] != "pre")):
			return fmt.Errorf("<%s> inside code", tag)
		case inside("a") && (name == "a" || name == "code" || name == "pre" || name == "blockquote"):
			return fmt.Errorf("<%s> inside a link", tag)
		case name == "blockquote" && inside("blockquote"):
			return fmt.Errorf("nested blockquote")
		case name == "a" && !telegramHref.MatchString(attr):
			return fmt.Errorf("link %s", attr)
		}
		return nil
	})
}

var telegramHref = regexp.MustCompile(`^href="(?i:https?://|tg://|mailto:)`)

var telegramTag = regexp.MustCompile(`^(b|i|s|pre|code|blockquote|code class="language-[A-Za-z0-9_+#.-]+"|a href="[^"<>]+")$`)

// FuzzTelegramHTML: no input makes HTML Telegram cannot parse, or invalid
// UTF-8 (go test runs the seeds; go test -fuzz=FuzzTelegramHTML explores).
func FuzzTelegramHTML(f *testing.F) {
	for _, s := range []string{"**a *b** c*", "```go\nx\n", "[a](https://x) _b_ ~~c~~ `d`", "> q\n- l\n1. o\n# h", "| a | b |\n|---|---|\n| c | d |",
		"> > q\n> - `c`\n>   ```\n>   x", "[`a` **b**](tg://x) <https://y> ![i](https://z)", "<b>&amp; &#60; &bogus;</b>\n\n<div>\nx\n</div>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		out := TelegramHTML(md)
		if err := telegramValid(out); err != nil {
			t.Fatalf("%q → %q: %v", md, out, err)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("%q → invalid UTF-8 %q", md, out)
		}
	})
}
