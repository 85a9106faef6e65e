package tokens

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tiktoken-go/tokenizer"

	"github.com/nanobot-durable/nanobot/chat"
)

// Counts published in OpenAI's "How to count tokens with tiktoken" cookbook.
func TestKnownCounts(t *testing.T) {
	cases := []struct {
		text          string
		cl100k, o200k int
	}{
		{"tiktoken is great!", 6, 6},
		{"antidisestablishmentarianism", 6, 6},
		{"2 + 2 = 4", 7, 7},
		{"お誕生日おめでとう", 9, 8},
	}
	for _, c := range cases {
		require.Equal(t, c.cl100k, ForEncoding(tokenizer.Cl100kBase).Text(c.text), "cl100k %q", c.text)
		require.Equal(t, c.o200k, ForEncoding(tokenizer.O200kBase).Text(c.text), "o200k %q", c.text)
	}
}

// Chinese text costs about a token per character, four times what a
// four-characters-a-token guess says; the guess would overflow the window.
func TestChineseIsNotCountedByCharacters(t *testing.T) {
	text := "你好，世界！我们今天去公园散步吧。"
	cl, o2 := ForEncoding(tokenizer.Cl100kBase).Text(text), ForEncoding(tokenizer.O200kBase).Text(text)
	require.Equal(t, 20, cl)
	require.Equal(t, 13, o2)
	guess := len([]rune(text)) / 4
	require.Greater(t, o2, 2*guess)
	require.Greater(t, cl, o2, "cl100k counts Chinese higher: the safe default for unknown vendors")
}

func TestEncodingByModelFamily(t *testing.T) {
	for model, want := range map[string]tokenizer.Encoding{
		"gpt-4o-mini": tokenizer.O200kBase, "openai/gpt-4.1": tokenizer.O200kBase, "o3-mini": tokenizer.O200kBase,
		"gpt-5": tokenizer.O200kBase, "gpt-4": tokenizer.Cl100kBase, "gpt-3.5-turbo": tokenizer.Cl100kBase,
		"deepseek-chat": tokenizer.Cl100kBase, "anthropic/claude-opus-4-5": tokenizer.Cl100kBase, "": tokenizer.Cl100kBase,
	} {
		require.Equal(t, want, EncodingFor(model), model)
	}
}

func TestMessageOverheads(t *testing.T) {
	c := ForEncoding(tokenizer.Cl100kBase)
	m := chat.Message{Role: chat.RoleUser, Content: "tiktoken is great!"}
	require.Equal(t, perMessage+1+6, c.Message(m), "3 overhead + 1 for the role + 6 for the text")
	require.Equal(t, perReply+c.Message(m)*2, c.Messages([]chat.Message{m, m}))
	call := chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "c1", Function: chat.FunctionCall{Name: "read_file", Arguments: `{"path":"a.txt"}`}}}}
	require.Greater(t, c.Message(call), perMessage+perCall+c.Text("read_file"))
	defs := []chat.ToolDefinition{{Name: "read_file", Description: "Read a file", Parameters: []byte(`{"type":"object"}`)}}
	require.Equal(t, perToolDef+c.Text("read_file")+c.Text("Read a file")+c.Text(`{"type":"object"}`), c.Tools(defs))
}

func TestInvalidUTF8StillCounts(t *testing.T) {
	require.Positive(t, For("gpt-4").Text(string([]byte{0xff, 0xfe, 'a', 'b', 'c', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})))
}

// BenchmarkMessagesHistory counts a 150-message history as a turn does several times:
// roles and short replies are counted every time, long contents once.
func BenchmarkMessagesHistory(b *testing.B) {
	c := For("gpt-4o")
	msgs := make([]chat.Message, 0, 150)
	for i := range 75 {
		msgs = append(msgs, chat.Message{Role: chat.RoleUser, Content: fmt.Sprintf("hi %d", i)},
			chat.Message{Role: chat.RoleAssistant, Content: "hello"})
	}
	for b.Loop() {
		c.Messages(msgs)
	}
}
