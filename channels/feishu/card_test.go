package feishu

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// nanobot's test_feishu_markdown_rendering and test_feishu_table_split, in Go.

func TestTableCellsLoseMarkdownMarks(t *testing.T) {
	el := tableElement("\n| **Name** | __Status__ | *Notes* | ~~State~~ |\n| --- | --- | --- | --- |\n| **Alice** | __Ready__ | *Fast* | ~~Old~~ |\n")
	require.NotNil(t, el)
	var names []string
	for _, c := range el["columns"].([]element) {
		names = append(names, c["display_name"].(string))
	}
	require.Equal(t, []string{"Name", "Status", "Notes", "State"}, names)
	require.Equal(t, []element{{"c0": "Alice", "c1": "Ready", "c2": "Fast", "c3": "Old"}}, el["rows"])
	require.Equal(t, 2, el["page_size"])
}

func TestHeadingBecomesABoldDiv(t *testing.T) {
	require.Equal(t, []element{{"tag": "div", "text": element{"tag": "lark_md", "content": "**Important status update**"}}},
		headingElements("# **Important** *status* ~~update~~"))
}

func TestHeadingKeepsBodyAndCode(t *testing.T) {
	els := headingElements("# **Heading**\n\nBody with **bold** text.\n\n```python\nprint('hi')\n```")
	require.Equal(t, element{"tag": "div", "text": element{"tag": "lark_md", "content": "**Heading**"}}, els[0])
	require.Equal(t, "markdown", els[1]["tag"])
	require.Contains(t, els[1]["content"], "Body with **bold** text.")
	require.Contains(t, els[1]["content"], "```python\nprint('hi')\n```")
}

func TestFencedTableStaysCode(t *testing.T) {
	text := "Before\n\n```\n| a | b |\n| - | - |\n| 1 | 2 |\n```\n\nAfter"
	els := cardElements(text, -1)
	var md []string
	for _, el := range els {
		require.NotEqual(t, "table", el["tag"])
		md = append(md, el["content"].(string))
	}
	require.Contains(t, strings.Join(md, "\n"), "```\n| a | b |\n| - | - |\n| 1 | 2 |\n```")
}

func TestFencedHeadingStaysCode(t *testing.T) {
	els := cardElements("```\n# not a heading\n```", -1)
	require.Len(t, els, 1)
	require.Equal(t, "markdown", els[0]["tag"])
}

func TestSplitByTables(t *testing.T) {
	tbl := element{"tag": "table"}
	md := element{"tag": "markdown", "content": "x"}
	require.Equal(t, [][]element{nil}, splitByTables(nil))
	require.Equal(t, [][]element{{md, tbl, md}}, splitByTables([]element{md, tbl, md}))
	require.Equal(t, [][]element{{md, tbl}, {tbl, md}, {tbl}}, splitByTables([]element{md, tbl, tbl, md, tbl}))
}

func TestOneCardDrawsOneTable(t *testing.T) {
	text := "| a |\n| - |\n| 1 |\n\n| b |\n| - |\n| 2 |\n"
	require.Len(t, cards(text), 2)
	one := oneCard(text)
	require.Equal(t, 1, strings.Count(one, `"tag":"table"`), "a streamed card keeps its later tables as text: %s", one)
	require.Contains(t, one, "| b |")
}
