package markdown

import "testing"

func TestWhatsApp(t *testing.T) {
	checkRender(t, WhatsApp, []renderCase{
		{"plain", "hello world", "hello world"},
		{"bold", "this is **bold** text", "this is *bold* text"},
		{"italic", "this is *italic* text", "this is _italic_ text"},
		{"strike", "~~gone~~ here", "~gone~ here"},
		{"inline code", "run `ls -la` now", "run `ls -la` now"},
		{"no escaping", "a < b & c > d", "a < b & c > d"},
		{"link", "see [the docs](https://example.org/docs)", "see the docs (https://example.org/docs)"},
		{"bare url", "https://example.org", "https://example.org"},
		{"heading", "# Title\n\nbody", "*Title*\n\nbody"},
		{"bullets", "- one\n- two", "- one\n- two"},
		{"quote", "> said", "> said"},
		{"fence", "```go\nfmt.Println(1)\n```", "```\nfmt.Println(1)\n```"},
	})
}
