package markdown

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSignal(t *testing.T) {
	for _, c := range []struct {
		name, md, text string
		styles         []string
	}{
		{"plain", "hello world", "hello world", nil},
		{"bold", "this is **bold** text", "this is bold text", []string{"8:4:BOLD"}},
		{"italic and strike", "*it* ~~gone~~", "it gone", []string{"0:2:ITALIC", "3:4:STRIKETHROUGH"}},
		{"nested", "**bold *both***", "bold both", []string{"5:4:ITALIC", "0:9:BOLD"}},
		{"code", "run `ls -la`", "run ls -la", []string{"4:6:MONOSPACE"}},
		{"fence", "```go\nx := 1\n```", "x := 1", []string{"0:6:MONOSPACE"}},
		{"heading", "# Title\n\nbody", "Title\n\nbody", []string{"0:5:BOLD"}},
		{"link", "see [docs](https://example.org)", "see docs (https://example.org)", nil},
		{"bullets", "- one\n- two", "• one\n• two", nil},
		{"utf-16 offsets", "😀 **hi**", "😀 hi", []string{"3:2:BOLD"}},
		{"the model's own marks are text", "a\uE000b **c**", "ab c", []string{"3:1:BOLD"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			text, styles := Signal(c.md)
			require.Equal(t, c.text, text)
			require.Equal(t, c.styles, styles)
		})
	}
}
