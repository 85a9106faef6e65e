package feishu

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// nanobot's test_feishu_table_split, in Go; the elements themselves are
// markdown.FeishuCard's (channels/markdown/feishu_test.go).

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
	require.Contains(t, one, "```\\nb\\n─\\n2\\n```", "the later table is aligned text in a code block")
}
