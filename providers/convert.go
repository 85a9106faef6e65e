package providers

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nanobot-durable/nanobot/chat"
)

// emptyContent replaces blank message content, which several providers reject
// (nanobot's _sanitize_empty_content).
const emptyContent = "(empty)"

// emptyParameters stands in for a tool without a schema; "parameters": null is
// rejected by strict servers.
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// shape converts a Request to go-openai's struct plus the top-level fields the
// doer writes itself. Model, token limit, temperature and reasoning effort go
// through the doer because go-openai's struct cannot send temperature 0 and its
// client-side model checks reject requests OpenAI-compatible servers accept.
func (c *OpenAICompatible) shape(req Request) (openai.ChatCompletionRequest, map[string]any, error) {
	tools, err := toOpenAITools(req.Tools)
	if err != nil {
		return openai.ChatCompletionRequest{}, nil, err
	}
	creq := openai.ChatCompletionRequest{
		Messages: toOpenAIMessages(req.Messages),
		Tools:    tools,
	}
	if len(tools) > 0 {
		creq.ToolChoice = toolChoice(req.ToolChoice)
	}
	set := map[string]any{"model": req.Model}
	if req.MaxTokens > 0 {
		if c.opts.UseMaxCompletionTokens || requiresMaxCompletionTokens(req.Model) {
			set["max_completion_tokens"] = req.MaxTokens
		} else {
			set["max_tokens"] = req.MaxTokens
		}
	}
	if req.Temperature != nil && supportsTemperature(req.Model, req.ReasoningEffort) {
		set["temperature"] = *req.Temperature
	}
	if req.ReasoningEffort != "" {
		set["reasoning_effort"] = req.ReasoningEffort
	}
	if cachesPrompt(c.opts.PromptCaching, req.Model) {
		msgs, tools, err := cacheBreakpoints(creq)
		if err != nil {
			return openai.ChatCompletionRequest{}, nil, err
		}
		set["messages"] = msgs
		if tools != nil {
			set["tools"] = tools
		}
	}
	return creq, set, nil
}

func toolChoice(choice string) any {
	switch choice {
	case "":
		return ToolChoiceAuto
	case ToolChoiceAuto, ToolChoiceNone, ToolChoiceRequired:
		return choice
	default:
		return openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: choice}}
	}
}

// modelSlug drops a gateway prefix such as "openai/".
func modelSlug(model string) string {
	s := strings.ToLower(model)
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// requiresMaxCompletionTokens mirrors nanobot's model list: reasoning families
// reject max_tokens.
func requiresMaxCompletionTokens(model string) bool {
	slug := modelSlug(model)
	if slug == "kimi-k3" || strings.Contains(slug, "gpt-5") {
		return true
	}
	for _, p := range []string{"o1", "o3", "o4"} {
		if slug == p || strings.HasPrefix(slug, p+"-") || strings.HasPrefix(slug, p+".") {
			return true
		}
	}
	return false
}

// supportsTemperature: reasoning families reject a temperature unless
// reasoning is switched off.
func supportsTemperature(model, effort string) bool {
	return !requiresMaxCompletionTokens(model) || strings.EqualFold(effort, "none")
}

func toOpenAITools(defs []chat.ToolDefinition) ([]openai.Tool, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	tools := make([]openai.Tool, 0, len(defs))
	for _, d := range defs {
		params := d.Parameters
		if len(params) == 0 || string(params) == "null" {
			params = emptyParameters
		}
		if !json.Valid(params) {
			return nil, &Error{
				Message: fmt.Sprintf("tool %q: parameters are not valid JSON", d.Name),
				Class:   ClassNonRetryable,
			}
		}
		tools = append(tools, openai.Tool{
			Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{
				Name:        d.Name,
				Description: d.Description,
				Parameters:  params,
			},
		})
	}
	return tools, nil
}

func toOpenAIMessages(msgs []chat.Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, toOpenAIMessage(m))
	}
	return out
}

func toOpenAIMessage(m chat.Message) openai.ChatCompletionMessage {
	out := openai.ChatCompletionMessage{
		Role:             m.Role,
		Name:             m.Name,
		ToolCallID:       m.ToolCallID,
		ReasoningContent: m.ReasoningContent,
	}
	for _, tc := range m.ToolCalls {
		typ := tc.Type
		if typ == "" {
			typ = string(openai.ToolTypeFunction)
		}
		args := tc.Function.Arguments
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		out.ToolCalls = append(out.ToolCalls, openai.ToolCall{
			ID:       tc.ID,
			Type:     openai.ToolType(typ),
			Function: openai.FunctionCall{Name: tc.Function.Name, Arguments: args},
		})
	}
	switch parts := contentParts(m.ContentParts); {
	case len(parts) > 0:
		out.MultiContent = parts
	case m.Content != "":
		out.Content = m.Content
	case m.Role == chat.RoleAssistant && len(m.ToolCalls) > 0:
		// An assistant turn made only of tool calls goes without content.
	default:
		out.Content = emptyContent
	}
	return out
}

// contentParts decodes raw multimodal content, dropping empty text parts;
// nil means "use the plain content string".
func contentParts(raw []byte) []openai.ChatMessagePart {
	if len(raw) == 0 {
		return nil
	}
	var parts []openai.ChatMessagePart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil
	}
	kept := parts[:0]
	for _, p := range parts {
		if p.Type == openai.ChatMessagePartTypeText && p.Text == "" {
			continue
		}
		kept = append(kept, p)
	}
	return kept
}

func fromOpenAIToolCalls(calls []openai.ToolCall) []chat.ToolCall {
	out := make([]chat.ToolCall, 0, len(calls))
	for _, tc := range calls {
		out = append(out, chat.ToolCall{
			ID:       tc.ID,
			Type:     string(tc.Type),
			Function: chat.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments},
		})
	}
	return out
}

// buildResponse applies nanobot's extract_reasoning: a dedicated reasoning
// field wins, otherwise inline think blocks are the reasoning; think blocks
// never stay in Content.
func buildResponse(content, reasoning string, calls []chat.ToolCall, finish string, usage Usage, model string) *Response {
	r := &Response{FinishReason: finish, Usage: usage, Model: model}
	if reasoning != "" {
		r.ReasoningContent = stripReasoningTags(reasoning)
		r.Content = StripThink(content)
	} else {
		r.ReasoningContent, r.Content = ExtractThink(content)
	}
	if r.FinishReason == "" || r.FinishReason == "null" {
		r.FinishReason = FinishStop
	}
	if r.FinishReason == FinishLength && r.Content != "" {
		r.Content = keepEdges(content, r.Content) // a cut reply is continued: its pieces must join exactly
	}
	r.ToolCalls = normalizeToolCalls(calls)
	return r
}

// normalizeToolCalls gives every call a unique id (some gateways omit or
// reuse them) and object-shaped arguments.
func normalizeToolCalls(calls []chat.ToolCall) []chat.ToolCall {
	if len(calls) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(calls))
	out := make([]chat.ToolCall, 0, len(calls))
	for _, tc := range calls {
		if tc.ID == "" || seen[tc.ID] {
			tc.ID = newToolCallID()
		}
		seen[tc.ID] = true
		if tc.Type == "" {
			tc.Type = string(openai.ToolTypeFunction)
		}
		if strings.TrimSpace(tc.Function.Arguments) == "" {
			tc.Function.Arguments = "{}"
		}
		out = append(out, tc)
	}
	return out
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// newToolCallID makes a 9-character alphanumeric id, a shape every provider
// accepts (Mistral insists on it).
func newToolCallID() string {
	b := make([]byte, 9)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return string(b)
}

func usageOf(u openai.Usage) Usage {
	out := Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	if d := u.PromptTokensDetails; d != nil {
		out.CachedTokens = d.CachedTokens
	}
	return out
}

// rawReasoning reads choices[0].message.reasoning, the field OpenRouter and
// vLLM use instead of reasoning_content, which go-openai does not decode.
func rawReasoning(body []byte) string {
	if !bytes.Contains(body, []byte(`"reasoning"`)) {
		return ""
	}
	var v struct {
		Choices []struct {
			Message struct {
				Reasoning json.RawMessage `json:"reasoning"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &v); err != nil || len(v.Choices) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(v.Choices[0].Message.Reasoning, &s); err != nil {
		return ""
	}
	return s
}

// messageText joins text parts when a server answered with an array content.
func messageText(m openai.ChatCompletionMessage) string {
	if m.Content != "" || len(m.MultiContent) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// keepEdges puts back the whitespace StripThink trimmed from the edges of raw.
func keepEdges(raw, stripped string) string {
	lead := raw[:len(raw)-len(strings.TrimLeftFunc(raw, unicode.IsSpace))]
	trail := raw[len(strings.TrimRightFunc(raw, unicode.IsSpace)):]
	return lead + stripped + trail
}
