package markdown

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDiscord(t *testing.T) {
	checkRender(t, Discord, []renderCase{
		{"plain", "hello world", "hello world"},
		{"marks", "**b** *i* _u_ __bb__ ~~s~~", "**b** *i* *u* **bb** ~~s~~"},
		{"escapes kept", `\*not italic\* 2 * 3 <x> &amp;`, `\*not italic\* 2 * 3 <x> &amp;`},
		{"code spans", "`a` and `` b`c ``", "`a` and ``b`c``"},
		{"fence keeps language", "```go\nx := `y`\n```", "```go\nx := `y`\n```"},
		{"tilde and indented code fenced", "~~~\na\n~~~\n\n    b", "```\na\n```\n\n```\nb\n```"},
		{"headings kept", "# One\n## Two\n### Three", "# One\n## Two\n### Three"},
		{"setext heading", "Title\n=====", "# Title"},
		{"deep heading bold", "#### Four **x**", "**Four x**"},
		{"link", "[the docs](https://e.org/a)", "[the docs](https://e.org/a)"},
		{"link with parens", "[wiki](https://en.wikipedia.org/wiki/Go_(game))", "[wiki](<https://en.wikipedia.org/wiki/Go_(game)>)"},
		{"empty label", "[](https://e.org)", "https://e.org"},
		{"image as link", "![a [big] cat](https://e.com/cat.png)", `[a \[big\] cat](https://e.com/cat.png)`},
		{"autolinks", "<https://a.b> and https://c.d", "<https://a.b> and https://c.d"},
		{"lists", "- a\n- b\n  1. c\n  2. d", "- a\n- b\n  1. c\n  2. d"},
		{"tasks", "- [ ] todo\n- [x] done", "- [ ] todo\n- [x] done"},
		{"quote", "> a **b**\n>\n> c", "> a **b**\n>\n> c"},
		{"rule drawn", "a\n\n***\n\nb", "a\n\n──────────\n\nb"},
		{"table as code", "| a | bb |\n|---|---|\n| **ccc** | d |", "```\na    bb\n───  ──\nccc  d\n```"},
		{"hard break", "a  \nb", "a\nb"},
		{"html as written", "<b>x</b>", "<b>x</b>"},
	})
}

// TestDiscordReadsBack: what Discord gets reads, as Markdown, as the
// model's Markdown did.
func TestDiscordReadsBack(t *testing.T) {
	for _, md := range []string{
		"# T\n\nsome **bold** and *it* `code` [l](https://x.y/z_(a)) \\_x\\_\n\n> q\n\n- a\n  - b\n1. c",
		"```py\nprint('`')\n```\n\n- [x] t\n\n~~s~~ <https://a.b> e@f.gh",
		"***both*** __a__b a_b_c *a **b** c*",
	} {
		require.Equal(t, MatrixHTML(md), MatrixHTML(Discord(md)), "%q → %q", md, Discord(md))
	}
}
