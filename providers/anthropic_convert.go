package providers

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/nanobot-durable/nanobot/chat"
)

// continuedOpener stands in for a history whose first turn is the model's
// (nanobot's synthetic opener): Anthropic requires a user turn first.
const continuedOpener = "(conversation continued)"

// anthropicTurn is one message of the Messages API while it is assembled.
type anthropicTurn struct {
	role   string // chat.RoleUser or chat.RoleAssistant
	blocks []anthropic.ContentBlockParamUnion
}

// anthropicPrompt is a Request in the Messages API's shape.
type anthropicPrompt struct {
	system []anthropic.TextBlockParam
	turns  []anthropicTurn
	tools  []anthropic.ToolUnionParam
}

// toAnthropicPrompt converts our OpenAI-shaped history as nanobot's
// _convert_messages does: system messages become the system blocks, tool
// results join the user turn after the call, same-role turns merge.
func toAnthropicPrompt(req Request) (anthropicPrompt, error) {
	var p anthropicPrompt
	ids := newToolIDMap()
	for _, m := range req.Messages {
		switch m.Role {
		case chat.RoleSystem:
			if text := strings.TrimSpace(m.Content); text != "" {
				p.system = append(p.system, anthropic.TextBlockParam{Text: m.Content})
			}
		case chat.RoleTool:
			p.add(chat.RoleUser, toolResultBlock(m, ids))
		case chat.RoleAssistant:
			p.add(chat.RoleAssistant, assistantBlocks(m, ids)...)
		default:
			p.add(chat.RoleUser, userBlocks(m.Content, m.ContentParts)...)
		}
	}
	p.turns = alternate(p.turns)
	tools, err := toAnthropicTools(req.Tools)
	if err != nil {
		return anthropicPrompt{}, err
	}
	p.tools = tools
	return p, nil
}

// add appends blocks to the last turn when it has the same role.
func (p *anthropicPrompt) add(role string, blocks ...anthropic.ContentBlockParamUnion) {
	if n := len(p.turns); n > 0 && p.turns[n-1].role == role {
		p.turns[n-1].blocks = append(p.turns[n-1].blocks, blocks...)
		return
	}
	p.turns = append(p.turns, anthropicTurn{role: role, blocks: blocks})
}

// alternate applies Anthropic's stricter order (nanobot's _merge_consecutive):
// no trailing assistant turn (prefill is refused), and a user turn first.
func alternate(turns []anthropicTurn) []anthropicTurn {
	var popped *anthropicTurn
	for len(turns) > 0 && turns[len(turns)-1].role == chat.RoleAssistant {
		last := turns[len(turns)-1]
		popped = &last
		turns = turns[:len(turns)-1]
	}
	if len(turns) == 0 && popped != nil && !hasToolUse(*popped) {
		turns = append(turns, anthropicTurn{role: chat.RoleUser, blocks: textOnly(popped.blocks)})
	}
	if len(turns) > 0 && turns[0].role == chat.RoleAssistant && !hasToolUse(turns[0]) {
		turns = append([]anthropicTurn{{role: chat.RoleUser, blocks: []anthropic.ContentBlockParamUnion{textBlock(continuedOpener)}}}, turns...)
	}
	return turns
}

func hasToolUse(t anthropicTurn) bool {
	for _, b := range t.blocks {
		if b.OfToolUse != nil {
			return true
		}
	}
	return false
}

// textOnly keeps the text of an assistant turn rerouted as the user's.
func textOnly(blocks []anthropic.ContentBlockParamUnion) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, b := range blocks {
		if b.OfText != nil {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		out = append(out, textBlock(emptyContent))
	}
	return out
}

func textBlock(text string) anthropic.ContentBlockParamUnion {
	return anthropic.ContentBlockParamUnion{OfText: &anthropic.TextBlockParam{Text: text}}
}

// userBlocks converts user content: text parts, image_url parts as image
// blocks (base64 from a data URL, else by URL), a foreign part as its JSON
// text (as nanobot does), blank content as "(empty)".
func userBlocks(content string, parts []byte) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, p := range partsOf(content, parts) {
		switch {
		case p.image != "":
			out = append(out, anthropic.ContentBlockParamUnion{OfImage: imageBlock(p.image)})
		case p.foreign != "":
			out = append(out, textBlock(p.foreign))
		default:
			out = append(out, textBlock(p.text))
		}
	}
	return out
}

var dataURL = regexp.MustCompile(`(?s)^data:(image/[\w.+-]+);base64,(.+)$`)

// imageBlock is nanobot's _convert_image_block.
func imageBlock(url string) *anthropic.ImageBlockParam {
	if m := dataURL.FindStringSubmatch(url); m != nil {
		return &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{
			OfBase64: &anthropic.Base64ImageSourceParam{Data: m[2], MediaType: anthropic.Base64ImageSourceMediaType(m[1])},
		}}
	}
	return &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{
		OfURL: &anthropic.URLImageSourceParam{URL: url},
	}}
}

// thinkingBlock is one stored thinking or redacted_thinking block.
type thinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

// assistantBlocks: the signed thinking blocks first (Anthropic requires them
// back in a tool loop), then the text, then one tool_use per call.
func assistantBlocks(m chat.Message, ids *toolIDMap) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	var stored []thinkingBlock
	if len(m.ThinkingBlocks) > 0 && json.Unmarshal(m.ThinkingBlocks, &stored) == nil {
		for _, tb := range stored {
			switch tb.Type {
			case "thinking":
				out = append(out, anthropic.ContentBlockParamUnion{OfThinking: &anthropic.ThinkingBlockParam{Thinking: tb.Thinking, Signature: tb.Signature}})
			case "redacted_thinking":
				out = append(out, anthropic.ContentBlockParamUnion{OfRedactedThinking: &anthropic.RedactedThinkingBlockParam{Data: tb.Data}})
			}
		}
	}
	if strings.TrimSpace(m.Content) != "" {
		out = append(out, textBlock(m.Content))
	}
	for _, tc := range m.ToolCalls {
		out = append(out, anthropic.ContentBlockParamUnion{OfToolUse: &anthropic.ToolUseBlockParam{
			ID: ids.use(tc.ID), Name: tc.Function.Name, Input: argumentsObject(tc.Function.Arguments),
		}})
	}
	if len(out) == 0 {
		out = append(out, textBlock(emptyContent))
	}
	return out
}

// argumentsObject is the call's arguments as a JSON object, {} when they
// are not one (nanobot's tool_arguments_object_for_replay).
func argumentsObject(args string) json.RawMessage {
	var buf bytes.Buffer
	trimmed := bytes.TrimSpace([]byte(args))
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Compact(&buf, trimmed) != nil {
		return json.RawMessage(`{}`)
	}
	return buf.Bytes()
}

// toolResultBlock answers a tool_use by its (mapped) id.
func toolResultBlock(m chat.Message, ids *toolIDMap) anthropic.ContentBlockParamUnion {
	var content []anthropic.ToolResultBlockParamContentUnion
	for _, b := range userBlocks(m.Content, m.ContentParts) {
		switch {
		case b.OfText != nil:
			content = append(content, anthropic.ToolResultBlockParamContentUnion{OfText: b.OfText})
		case b.OfImage != nil:
			content = append(content, anthropic.ToolResultBlockParamContentUnion{OfImage: b.OfImage})
		}
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &anthropic.ToolResultBlockParam{
		ToolUseID: ids.result(m.ToolCallID), Content: content,
	}}
}

// toAnthropicTools sends each schema's bytes as they are, so the tools
// block stays byte-identical across turns.
func toAnthropicTools(defs []chat.ToolDefinition) ([]anthropic.ToolUnionParam, error) {
	var out []anthropic.ToolUnionParam
	for _, d := range defs {
		schema := d.Parameters
		if len(schema) == 0 || string(schema) == "null" {
			schema = emptyParameters
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(schema, &obj); err != nil {
			return nil, &Error{Message: fmt.Sprintf("tool %q: parameters are not a JSON object", d.Name), Class: ClassNonRetryable}
		}
		tool := &anthropic.ToolParam{
			Name:        d.Name,
			InputSchema: param.Override[anthropic.ToolInputSchemaParam](json.RawMessage(schema)),
		}
		if d.Description != "" {
			tool.Description = anthropic.String(d.Description)
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: tool})
	}
	return out, nil
}

// toolIDMap keeps tool_use ids valid and unique across the history, and
// points each tool_result at the id its call was sent with (nanobot's
// unique_tool_id / map_tool_result_id).
type toolIDMap struct {
	seen    map[string]bool
	pending map[string][]string
}

func newToolIDMap() *toolIDMap {
	return &toolIDMap{seen: map[string]bool{}, pending: map[string][]string{}}
}

func (t *toolIDMap) use(raw string) string {
	seed := sanitizeToolID(raw)
	if seed == "" {
		seed = "toolu_" + newToolCallID()
	}
	id := seed
	for n := 2; t.seen[id]; n++ {
		id = fmt.Sprintf("%s__dedupe_%d", seed, n)
	}
	t.seen[id] = true
	if raw != "" {
		t.pending[raw] = append(t.pending[raw], id)
	}
	return id
}

func (t *toolIDMap) result(raw string) string {
	if q := t.pending[raw]; len(q) > 0 {
		t.pending[raw] = q[1:]
		return q[0]
	}
	return sanitizeToolID(raw)
}

var validToolID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
var invalidToolIDChars = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// sanitizeToolID coerces an id from another provider (pipes, dots) into
// Anthropic's ^[a-zA-Z0-9_-]+$, keeping distinct ids distinct.
func sanitizeToolID(id string) string {
	if id == "" || validToolID.MatchString(id) {
		return id
	}
	prefix := invalidToolIDChars.ReplaceAllString(id, "_")
	if len(prefix) > 48 {
		prefix = prefix[:48]
	}
	if prefix = strings.Trim(prefix, "_"); prefix == "" {
		prefix = "toolu"
	}
	sum := sha1.Sum([]byte(id))
	return prefix + "_" + hex.EncodeToString(sum[:])[:8]
}
