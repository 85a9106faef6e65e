package markdown

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWebHTMLRendersTablesCodeAndSafeLinks(t *testing.T) {
	md := "# Plan\n\n| a | b |\n|---|---|\n| 1 | **2** |\n\n```go\nfmt.Println(\"<x>\")\n```\n\n" +
		"[site](https://example.org) [bad](javascript:alert(1)) <script>alert(1)</script>\n\n![img](https://example.org/a.png)"
	got := WebHTML(md)
	require.Contains(t, got, "<h1>Plan</h1>")
	require.Contains(t, got, "<table>\n<thead>\n<tr><th>a</th><th>b</th></tr>")
	require.Contains(t, got, "<td><strong>2</strong></td>")
	require.Contains(t, got, `<pre><code class="language-go">fmt.Println("&lt;x&gt;")</code></pre>`)
	require.Contains(t, got, `<a href="https://example.org" rel="noopener noreferrer" target="_blank">site</a>`)
	require.Contains(t, got, "bad (javascript:alert(1))")
	require.Contains(t, got, "&lt;script&gt;alert(1)&lt;/script&gt;")
	require.NotContains(t, got, "<script")
	require.NotContains(t, got, "<img")
	require.Equal(t, 2, strings.Count(got, `rel="noopener noreferrer"`), "the site and the image (as a link); the bad link none")
}

func TestWebHTMLRefusesRawHTMLBlocks(t *testing.T) {
	got := WebHTML("<div onclick=\"x()\">hi</div>\n\n<iframe src=\"https://evil\"></iframe>")
	require.NotContains(t, got, "<div")
	require.NotContains(t, got, "<iframe")
	require.Contains(t, got, "&lt;iframe")
}
