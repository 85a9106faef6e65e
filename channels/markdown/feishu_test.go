package markdown

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type card = []map[string]any

func mdElement(s string) map[string]any { return map[string]any{"tag": "markdown", "content": s} }

func boldDiv(s string) map[string]any {
	return map[string]any{"tag": "div", "text": map[string]any{"tag": "lark_md", "content": s}}
}

// nanobot's test_feishu_markdown_rendering, in Go: what the card showed
// when regexes cut it stays.
func TestFeishuCardKeepsNanobotsLayout(t *testing.T) {
	require.Equal(t, card{boldDiv("**Important status update**")}, FeishuCard("# **Important** *status* ~~update~~", -1),
		"a heading is a bold div without the marks inside")
	require.Equal(t, card{boldDiv("**Heading**"), mdElement("Body with **bold** text.\n\n```python\nprint('hi')\n```")},
		FeishuCard("# **Heading**\n\nBody with **bold** text.\n\n```python\nprint('hi')\n```", -1))
	require.Equal(t, card{mdElement("Before\n\n```\n| a | b |\n| - | - |\n| 1 | 2 |\n```\n\nAfter")},
		FeishuCard("Before\n\n```\n| a | b |\n| - | - |\n| 1 | 2 |\n```\n\nAfter", -1), "a table in a code block stays code")
	require.Equal(t, card{mdElement("```\n# not a heading\n```")}, FeishuCard("```\n# not a heading\n```", -1))
	require.Equal(t, card{mdElement("")}, FeishuCard("", -1))
}

func TestFeishuTableCellsLoseTheirMarks(t *testing.T) {
	els := FeishuCard("\n| **Name** | __Status__ | *Notes* | ~~State~~ |\n| --- | --- | --- | --- |\n| **Alice** | __Ready__ | *Fast* | ~~Old~~ |\n", -1)
	require.Len(t, els, 1)
	var names []string
	for _, c := range els[0]["columns"].([]map[string]any) {
		names = append(names, c["display_name"].(string))
	}
	require.Equal(t, []string{"Name", "Status", "Notes", "State"}, names)
	require.Equal(t, []map[string]any{{"c0": "Alice", "c1": "Ready", "c2": "Fast", "c3": "Old"}}, els[0]["rows"])
	require.Equal(t, 2, els[0]["page_size"])
}

// TestFeishuCardFromTheTree: the blocks between headings, rules and tables
// are the Markdown a card reads, written from the parsed document.
func TestFeishuCardFromTheTree(t *testing.T) {
	md := "Intro with __bold__, a [link](https://e.com/x) and <https://e.com/y>, `code`.\n\n" +
		"* one\n* two\n  1. nested\n\n---\n\n![chart](https://e.com/c.png) and [js](javascript:alert(1))\n\n> quoted\n\n" +
		"| a |\n|---|\n| 1 |\n\n| b |\n|---|\n| 2 |"
	require.Equal(t, card{
		mdElement("Intro with **bold**, a [link](https://e.com/x) and [https://e.com/y](https://e.com/y), `code`.\n\n- one\n- two\n  1. nested"),
		{"tag": "hr"},
		mdElement("[chart](https://e.com/c.png) and js (javascript:alert(1))\n\n> quoted"),
		{"tag": "table", "page_size": 2, "columns": []map[string]any{{"tag": "column", "name": "c0", "display_name": "a", "width": "auto"}},
			"rows": []map[string]any{{"c0": "1"}}},
		mdElement("```\nb\n─\n2\n```"),
	}, FeishuCard(md, 1), "an image is a link, a link Feishu cannot open is text; past the card's one table, a table is aligned code")
}
