package providers

import (
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nanobot-durable/nanobot/chat"
)

// responsesInput converts our OpenAI-chat history to the Responses API's
// instructions and input items, as nanobot's convert_messages does.
func responsesInput(msgs []chat.Message) (instructions string, items []any) {
	var system []string
	used := map[string]bool{}
	for i, m := range msgs {
		switch m.Role {
		case chat.RoleSystem:
			if strings.TrimSpace(m.Content) != "" {
				system = append(system, m.Content)
			}
		case chat.RoleAssistant:
			if strings.TrimSpace(m.Content) != "" {
				items = append(items, openai.ResponseInputMessage{
					Type: "message", Role: chat.RoleAssistant, Status: "completed",
					Content: []map[string]string{{"type": "output_text", "text": m.Content}},
				})
			}
			for _, tc := range m.ToolCalls {
				callID, itemID := splitCallID(tc.ID)
				if itemID == "" {
					itemID = fmt.Sprintf("fc_%d", i)
				}
				items = append(items, responsesFunctionCall{
					Type: "function_call", ID: uniqueItemID(itemID, used), CallID: callID,
					Name: tc.Function.Name, Arguments: string(argumentsObject(tc.Function.Arguments)),
				})
			}
		case chat.RoleTool:
			callID, _ := splitCallID(m.ToolCallID)
			items = append(items, openai.ResponseFunctionCallOutput{
				Type: "function_call_output", CallID: callID, Output: responsesToolOutput(m),
			})
		default:
			items = append(items, openai.ResponseInputMessage{Role: chat.RoleUser, Content: responsesUserContent(m)})
		}
	}
	return strings.Join(system, "\n\n"), items
}

// responsesFunctionCall replays a call the model made.
type responsesFunctionCall struct {
	Type      string `json:"type"`
	ID        string `json:"id,omitempty"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// responsesUserContent: text parts as input_text, image_url parts as
// input_image; blank content as "(empty)".
func responsesUserContent(m chat.Message) []any {
	var out []any
	for _, b := range partsOf(m.Content, m.ContentParts) {
		switch {
		case b.image != "":
			out = append(out, openai.ResponseInputImage{Type: "input_image", ImageURL: b.image, Detail: "auto"})
		case b.foreign == "": // a part of another kind is dropped, as nanobot does
			out = append(out, openai.ResponseInputText{Type: "input_text", Text: b.text})
		}
	}
	if len(out) == 0 {
		out = append(out, openai.ResponseInputText{Type: "input_text", Text: emptyContent})
	}
	return out
}

// responsesToolOutput is the tool's text, or its parts when it returned
// images, which the Responses API takes as function output.
func responsesToolOutput(m chat.Message) any {
	if len(m.ContentParts) == 0 {
		if strings.TrimSpace(m.Content) == "" {
			return emptyContent
		}
		return m.Content
	}
	return responsesUserContent(m)
}

// splitCallID reads nanobot's compound "call_id|item_id" tool call id.
func splitCallID(id string) (callID, itemID string) {
	callID, itemID, _ = strings.Cut(id, "|")
	if callID == "" {
		callID = "call_0"
	}
	return callID, itemID
}

// uniqueItemID keeps input item ids unique within one request.
func uniqueItemID(id string, used map[string]bool) string {
	out := id
	for n := 2; used[out]; n++ {
		out = fmt.Sprintf("%s_%d", id, n)
	}
	used[out] = true
	return out
}

func responsesTools(defs []chat.ToolDefinition) ([]openai.ResponseTool, error) {
	fns, err := toOpenAITools(defs)
	if err != nil {
		return nil, err
	}
	out := make([]openai.ResponseTool, 0, len(fns))
	for _, f := range fns {
		out = append(out, openai.NewResponseFunctionTool(*f.Function))
	}
	return out, nil
}

func responsesToolChoice(choice string) any {
	switch choice {
	case "", ToolChoiceAuto:
		return ToolChoiceAuto
	case ToolChoiceNone, ToolChoiceRequired:
		return choice
	default:
		return map[string]string{"type": "function", "name": choice}
	}
}

// responsesOutput reads an output array: message text (and refusals),
// function calls (id "call_id|item_id", so a replay names both) and
// reasoning summaries.
func responsesOutput(output []any) (text, reasoning string, calls []chat.ToolCall) {
	var t, r strings.Builder
	for _, raw := range output {
		var item openai.ResponseOutputItem
		b, err := json.Marshal(raw)
		if err != nil || json.Unmarshal(b, &item) != nil {
			continue
		}
		switch item.Type {
		case "message":
			for _, c := range item.Content {
				switch c.Type {
				case "output_text":
					t.WriteString(c.Text)
				case "refusal":
					t.WriteString(c.Refusal)
				}
			}
		case "function_call":
			id := item.CallID
			if item.ID != "" {
				id += "|" + item.ID
			}
			calls = append(calls, chat.ToolCall{ID: id, Type: "function",
				Function: chat.FunctionCall{Name: item.Name, Arguments: item.Arguments}})
		case "reasoning":
			for _, s := range item.Summary {
				if r.Len() > 0 {
					r.WriteString("\n")
				}
				r.WriteString(s.Text)
			}
		}
	}
	return t.String(), r.String(), calls
}

// responsesFinish maps a response status as nanobot's map_finish_reason,
// with tool calls reported as such.
func responsesFinish(resp *openai.CreateResponseResponse, calls int) string {
	switch resp.Status {
	case "incomplete":
		if d := resp.IncompleteDetails; d != nil && d.Reason == "content_filter" {
			return FinishContentFilter
		}
		return FinishLength
	case "failed", "cancelled":
		return "error"
	}
	if calls > 0 {
		return FinishToolCalls
	}
	return FinishStop
}

func responsesUsage(u *openai.ResponseUsage) Usage {
	if u == nil {
		return Usage{}
	}
	out := Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.TotalTokens}
	if out.TotalTokens == 0 {
		out.TotalTokens = u.InputTokens + u.OutputTokens
	}
	if d := u.InputTokensDetails; d != nil {
		out.CachedTokens, out.CacheWriteTokens = d.CachedTokens, d.CacheWriteTokens
	}
	return out
}
