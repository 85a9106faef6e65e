package markdown

import (
	"fmt"
	"regexp"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestMatrixHTML(t *testing.T) {
	cases := []renderCase{
		{"plain", "hello world", "<p>hello world</p>"},
		{"escaping", "a < b && c > d", "<p>a &lt; b &amp;&amp; c &gt; d</p>"},
		{"html is text", "<b>x</b> <script>alert(1)</script>", "<p>&lt;b&gt;x&lt;/b&gt; &lt;script&gt;alert(1)&lt;/script&gt;</p>"},
		{"html block is text", "<div>\n<img src=x onerror=alert(1)>\n</div>", "<p>&lt;div&gt;<br>\n&lt;img src=x onerror=alert(1)&gt;<br>\n&lt;/div&gt;</p>"},
		{"marks", "**b** *i* ~~s~~ `c<d`", "<p><strong>b</strong> <em>i</em> <del>s</del> <code>c&lt;d</code></p>"},
		{"line breaks", "one\ntwo  \nthree", "<p>one<br>\ntwo<br>\nthree</p>"},
		{"paragraphs", "a\n\nb", "<p>a</p>\n<p>b</p>"},
		{"heading", "## Sub *x*", "<h2>Sub <em>x</em></h2>"},
		{"link", `[the "docs"](https://e.org/?a=1&b=2)`, `<p><a href="https://e.org/?a=1&amp;b=2">the "docs"</a></p>`},
		{"unsafe link is text", "[x](javascript:alert(1))", "<p>x (javascript:alert(1))</p>"},
		{"relative link is text", "[readme](docs/README.md)", "<p>readme (docs/README.md)</p>"},
		{"magnet link", "[m](magnet:?xt=urn:x)", `<p><a href="magnet:?xt=urn:x">m</a></p>`},
		{"image is a link", "![a cat](https://e.com/cat.png)", `<p><a href="https://e.com/cat.png">a cat</a></p>`},
		{"autolinks", "<https://a.b> www.c.d e@f.gh", `<p><a href="https://a.b">https://a.b</a> <a href="http://www.c.d">www.c.d</a> <a href="mailto:e@f.gh">e@f.gh</a></p>`},
		{"fence", "```go\nx := \"<y>\"\n```", `<pre><code class="language-go">x := "&lt;y&gt;"</code></pre>`},
		{"odd language dropped", "```a\"b\nx\n```", "<pre><code>x</code></pre>"},
		{"indented code", "    code", "<pre><code>code</code></pre>"},
		{"quote", "> q **b**", "<blockquote>\n<p>q <strong>b</strong></p>\n</blockquote>"},
		{"list", "- a\n- b\n  1. c", "<ul>\n<li>a</li>\n<li>b\n<ol>\n<li>c</li>\n</ol>\n</li>\n</ul>"},
		{"ordered from 3", "3. x", "<ol start=\"3\">\n<li>x</li>\n</ol>"},
		{"loose list", "- a\n\n- b", "<ul>\n<li><p>a</p>\n</li>\n<li><p>b</p>\n</li>\n</ul>"},
		{"tasks", "- [ ] todo\n- [x] done", "<ul>\n<li>☐ todo</li>\n<li>☑ done</li>\n</ul>"},
		{"rule", "a\n\n---\n\nb", "<p>a</p>\n<hr>\n<p>b</p>"},
		{
			"table", "| a | **b** |\n|---|--:|\n| 1 | [x](https://x) |",
			"<table>\n<thead>\n<tr><th>a</th><th><strong>b</strong></th></tr>\n</thead>\n<tbody>\n<tr><td>1</td><td><a href=\"https://x\">x</a></td></tr>\n</tbody>\n</table>",
		},
		{"empty", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := MatrixHTML(c.md)
			require.Equal(t, c.want, got)
			require.NoError(t, matrixValid(got))
		})
	}
}

func TestPlainText(t *testing.T) {
	checkRender(t, PlainText, []renderCase{
		{"marks dropped", "**b** *i* ~~s~~ `c`", "b i s c"},
		{"link", "[docs](https://e.org) and <https://a.b>", "docs (https://e.org) and https://a.b"},
		{"image", "![a cat](https://e.com/cat.png)", "a cat (https://e.com/cat.png)"},
		{"escapes resolved", `\*x\* &amp; &#60;`, "*x* & <"},
		{"heading", "# Title\ntext", "Title\ntext"},
		{"lists", "- a\n  - b\n1. c\n- [x] d", "- a\n  - b\n1. c\n- [x] d"},
		{"quote", "> a\n>\n> b", "> a\n>\n> b"},
		{"code block", "```sh\n$ ls <dir>\n```", "$ ls <dir>"},
		{"table", "| a | bb |\n|---|---|\n| ccc | d |", "a    bb\n───  ──\nccc  d"},
	})
}

// matrixValid checks s holds only the tags and attributes MatrixHTML may
// write, nested properly, links to the spec's schemes, nothing unescaped.
func matrixValid(s string) error {
	void := func(name string) bool { return name == "br" || name == "hr" }
	return checkTags(s, void, func(tag, _, _ string, _ []string) error {
		if !matrixTag.MatchString(tag) {
			return fmt.Errorf("tag <%s> is not one MatrixHTML writes", tag)
		}
		return nil
	})
}

var matrixTag = regexp.MustCompile(`^(p|strong|em|del|code|pre|blockquote|ul|ol|li|h[1-6]|table|thead|tbody|tr|th|td|br|hr|` +
	`ol start="[0-9]+"|code class="language-[A-Za-z0-9_+#.-]+"|a href="(?i:https?://|ftp://|mailto:|magnet:)[^"<>]+")$`)

// FuzzMatrixHTML: no input makes HTML outside what Matrix clients show,
// unbalanced tags, a link to another scheme, or invalid UTF-8; and the
// plain body of the same input is valid UTF-8.
func FuzzMatrixHTML(f *testing.F) {
	for _, s := range []string{"**a *b** c*", "```go\nx\n", "[a](https://x) _b_ ~~c~~ `d`", "> q\n- l\n1. o\n# h", "| a | b |\n|---|---|\n| c | d |",
		"<script>x</script>\n\n<div>\ny\n</div>", "[x](javascript:a) ![i](data:x) <ftp://h/p> [m](MAILTO:a@b)", "3. a\n\n   - [ ] b\n\n> > c\n\n---"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		out := MatrixHTML(md)
		if err := matrixValid(out); err != nil {
			t.Fatalf("%q → %q: %v", md, out, err)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("%q → invalid UTF-8 %q", md, out)
		}
		if body := PlainText(md); !utf8.ValidString(body) {
			t.Fatalf("%q → plain text in invalid UTF-8 %q", md, body)
		}
	})
}
