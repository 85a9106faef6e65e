package markdown

import (
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// table is a GitHub table's cells, for the platforms that have no tables.
type table struct {
	align []east.Alignment
	head  []ast.Node
	rows  [][]ast.Node
}

func newTable(n *east.Table) *table {
	t := &table{align: n.Alignments}
	for r := n.FirstChild(); r != nil; r = r.NextSibling() {
		var cells []ast.Node
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, c)
		}
		if _, ok := r.(*east.TableHeader); ok {
			t.head = cells
			continue
		}
		t.rows = append(t.rows, cells)
	}
	return t
}

// aligned lays the table out as plain-text columns under a ruled header, for a monospaced block.
func (t *table) aligned(l *layout) string {
	grid := make([][]string, 0, len(t.rows)+1)
	var width []int
	for _, cells := range append([][]ast.Node{t.head}, t.rows...) {
		row := make([]string, len(cells))
		for i, c := range cells {
			row[i] = strings.ReplaceAll(l.plain(c), "\n", " ")
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(row[i]))
		}
		grid = append(grid, row)
	}
	lines := make([]string, 0, len(grid)+1)
	for n, row := range grid {
		cols := make([]string, len(row))
		for i, c := range row {
			cols[i] = t.pad(i, c, width[i])
		}
		lines = append(lines, strings.TrimRight(strings.Join(cols, "  "), " "))
		if n == 0 && len(grid) > 1 {
			rule := make([]string, len(row))
			for i := range row {
				rule[i] = strings.Repeat("─", max(width[i], 1))
			}
			lines = append(lines, strings.Join(rule, "  "))
		}
	}
	return strings.Join(lines, "\n")
}

// pad fills cell c of column i to width w as the column is aligned.
func (t *table) pad(i int, c string, w int) string {
	gap := w - utf8.RuneCountInString(c)
	var a east.Alignment
	if i < len(t.align) {
		a = t.align[i]
	}
	switch a {
	case east.AlignRight:
		return strings.Repeat(" ", gap) + c
	case east.AlignCenter:
		return strings.Repeat(" ", gap/2) + c + strings.Repeat(" ", gap-gap/2)
	}
	return c + strings.Repeat(" ", gap)
}
