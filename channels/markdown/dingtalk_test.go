package markdown

import "testing"

func TestDingTalk(t *testing.T) {
	checkRender(t, DingTalk, []renderCase{
		{"plain", "hello world", "hello world"},
		{"marks, strike dropped", "**b** *i* _u_ ~~s~~", "**b** *i* *u* s"},
		{"escapes kept", `\*not italic\* 2 * 3`, `\*not italic\* 2 * 3`},
		{"code span", "`a`", "`a`"},
		{"fence keeps language", "```go\nx := 1\n```", "```go\nx := 1\n```"},
		{"headings to six", "# One\n#### Four", "# One\n#### Four"},
		{"link", "[the docs](https://e.org/a)", "[the docs](https://e.org/a)"},
		{"image kept", "![cat](https://e.com/cat.png)", "![cat](https://e.com/cat.png)"},
		{"autolinks bare", "<https://a.b> and https://c.d", "https://a.b and https://c.d"},
		{"lists", "- a\n- b\n  1. c", "- a\n- b\n  1. c"},
		{"tasks boxed", "- [ ] todo\n- [x] done", "☐ todo\n☑ done"},
		{"quote", "> a **b**", "> a **b**"},
		{"table as code", "| a | bb |\n|---|---|\n| **ccc** | d |", "```\na    bb\n───  ──\nccc  d\n```"},
	})
}
