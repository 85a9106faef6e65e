package markdown

import "testing"

func TestWeCom(t *testing.T) {
	checkRender(t, WeCom, []renderCase{
		{"plain", "你好 world", "你好 world"},
		{"marks", "**b** *i* _u_ ~~s~~", "**b** *i* *u* s"},
		{"code", "`a` and `` b`c ``", "`a` and ``b`c``"},
		{"fence keeps language", "```go\nx := 1\n```", "```go\nx := 1\n```"},
		{"all six headings", "# One\n#### Four\n###### Six", "# One\n#### Four\n###### Six"},
		{"link", "[文档](https://work.weixin.qq.com/a)", "[文档](https://work.weixin.qq.com/a)"},
		{"image as link", "![cat](https://e.com/cat.png)", "[cat](https://e.com/cat.png)"},
		{"lists", "- a\n- b\n  1. c", "- a\n- b\n  1. c"},
		{"quote", "> a **b**", "> a **b**"},
		{"rule drawn", "a\n\n---\n\nb", "a\n\n──────────\n\nb"},
		{"table as code", "| a | bb |\n|---|---|\n| **ccc** | d |", "```\na    bb\n───  ──\nccc  d\n```"},
	})
}
