// Package tokens counts tokens with a real BPE tokenizer (tiktoken's
// encodings, compiled into the binary: nothing is downloaded at run time).
// Character guesses are far off for Chinese and other non-Latin text; the
// context budget, consolidation, /status and usage all count here.
package tokens

import (
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"

	"github.com/nanobot-durable/nanobot/chat"
)

// OpenAI's chat format overheads (the cookbook's counting rules).
const (
	perMessage = 3  // <|start|>role … <|end|>
	perName    = 1  // a message with a name
	perReply   = 3  // every reply is primed with <|start|>assistant<|message|>
	perToolDef = 8  // the wrapper around one function definition
	perCall    = 3  // the wrapper around one tool call
	perImage   = 85 // a low-detail image part
)

// Counter counts tokens with one encoding. It is safe for concurrent use.
type Counter struct {
	codec tokenizer.Codec
	mu    sync.Mutex
	cache map[string]int
}

// cacheLimit bounds the remembered counts (history is re-counted each call).
const cacheLimit = 8192

var (
	countersMu sync.Mutex
	counters   = map[tokenizer.Encoding]*Counter{}
)

// For returns the counter of the encoding a model family uses.
func For(model string) *Counter { return ForEncoding(EncodingFor(model)) }

// ForEncoding returns the counter of a tiktoken encoding (cl100k_base, o200k_base, …).
func ForEncoding(enc tokenizer.Encoding) *Counter {
	countersMu.Lock()
	defer countersMu.Unlock()
	if c, ok := counters[enc]; ok {
		return c
	}
	codec, err := tokenizer.Get(enc)
	if err != nil {
		codec, _ = tokenizer.Get(tokenizer.Cl100kBase) // every name EncodingFor gives exists
	}
	c := &Counter{codec: codec, cache: map[string]int{}}
	counters[enc] = c
	return c
}

// EncodingFor picks the encoding by model family: OpenAI's newer families
// use o200k_base; everything else counts with cl100k_base, which counts
// Chinese text higher than most other vendors' tokenizers do, so a budget
// computed with it errs on the safe side.
func EncodingFor(model string) tokenizer.Encoding {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range []string{"gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "gpt-oss", "o1", "o3", "o4"} {
		if strings.HasPrefix(m, p) {
			return tokenizer.O200kBase
		}
	}
	return tokenizer.Cl100kBase
}

// Encoding names the counter's encoding.
func (c *Counter) Encoding() string { return c.codec.GetName() }

// Text counts the tokens of s.
func (c *Counter) Text(s string) int {
	if s == "" {
		return 0
	}
	// Short strings are cached too: a role or a short reply, counted in every pass over a history.
	c.mu.Lock()
	n, ok := c.cache[s]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = c.count(s)
	c.mu.Lock()
	if len(c.cache) >= cacheLimit {
		clear(c.cache)
	}
	c.cache[s] = n
	c.mu.Unlock()
	return n
}

func (c *Counter) count(s string) int {
	n, err := c.codec.Count(s)
	if err != nil { // invalid UTF-8 and the like: fall back to a byte estimate
		return len(s)/3 + 1
	}
	return n
}

// Message counts one chat message as the model receives it.
func (c *Counter) Message(m chat.Message) int {
	n := perMessage + c.Text(m.Role) + c.Text(m.Content) + c.Text(m.ReasoningContent)
	if m.Name != "" {
		n += perName + c.Text(m.Name)
	}
	n += c.Text(m.ToolCallID)
	for _, tc := range m.ToolCalls {
		n += perCall + c.Text(tc.Function.Name) + c.Text(tc.Function.Arguments)
	}
	n += perImage * strings.Count(string(m.ContentParts), `"image_url"`)
	return n
}

// Messages counts a request's messages, the reply priming included.
func (c *Counter) Messages(msgs []chat.Message) int {
	n := perReply
	for _, m := range msgs {
		n += c.Message(m)
	}
	return n
}

// Tools counts the tool definitions sent with a request.
func (c *Counter) Tools(defs []chat.ToolDefinition) int {
	n := 0
	for _, d := range defs {
		n += perToolDef + c.Text(d.Name) + c.Text(d.Description) + c.Text(string(d.Parameters))
	}
	return n
}
