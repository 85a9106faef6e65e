package markdown

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEmailText(t *testing.T) {
	checkRender(t, EmailText, []renderCase{
		{"link", "see [the docs](https://e.org/x)", "see the docs (https://e.org/x)"},
		{"bare and angle links", "https://a.b and <https://c.d>", "https://a.b and https://c.d"},
		{"marks dropped, code kept", "**b** _i_ `x := 1`", "b i `x := 1`"},
		{"headings underlined", "# Title\n\n## Part *one*", "Title\n=====\n\nPart one\n--------"},
		{"lists", "- a\n- b\n  - c\n\n1. d", "- a\n- b\n  - c\n\n1. d"},
		{"code block indented", "```go\nif x {\n\ty()\n}\n```", "    if x {\n    \ty()\n    }"},
		{"quote", "> said\n> so", "> said\n> so"},
		{"html as written", "<b>x</b> &amp;", "<b>x</b> &"},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", "a  b\n─  ─\n1  2"},
	})
}

func TestEmailHTML(t *testing.T) {
	doc := EmailHTML("# Hi\n\n[x](https://e.org) [m](magnet:?xt=1) [j](javascript:alert(1)) <script>alert(1)</script>")
	require.True(t, strings.HasPrefix(doc, "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">"), doc)
	require.True(t, strings.HasSuffix(doc, "</body>\n</html>\n"), doc)
	_, rest, ok := strings.Cut(doc, "<body>\n")
	require.True(t, ok)
	body := strings.TrimSuffix(rest, "\n</body>\n</html>\n")
	require.Equal(t, `<h1>Hi</h1>`+"\n"+`<p><a href="https://e.org">x</a> m (magnet:?xt=1) j (javascript:alert(1)) &lt;script&gt;alert(1)&lt;/script&gt;</p>`, body)
	require.NoError(t, matrixValid(body))
	require.Equal(t, 1, strings.Count(doc, "<style>"))
	require.NotContains(t, doc, "<script")
}
