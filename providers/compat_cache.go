package providers

import (
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// cacheMarker is the cache_control value Anthropic models take, also
// through gateways that pass it on (nanobot's supports_prompt_caching).
var cacheMarker = map[string]string{"type": "ephemeral"}

// cachesPrompt: a gateway with prompt caching marks requests for Claude
// models only, as nanobot's _build_kwargs does.
func cachesPrompt(enabled bool, model string) bool {
	lower := strings.ToLower(model)
	return enabled && (strings.HasPrefix(lower, "anthropic/") || strings.HasPrefix(lower, "claude"))
}

// cacheBreakpoints returns the messages and tools of creq with nanobot's
// cache_control marks (the system message, the message before the newest,
// the last built-in and the last tool), to be written over the body.
func cacheBreakpoints(creq openai.ChatCompletionRequest) (messages, tools []map[string]json.RawMessage, err error) {
	if messages, err = asObjects(creq.Messages); err != nil {
		return nil, nil, fmt.Errorf("mark messages: %w", err)
	}
	if len(messages) > 0 && string(messages[0]["role"]) == `"system"` {
		markContent(messages[0])
	}
	if n := len(messages); n >= 3 {
		markContent(messages[n-2])
	}
	if len(creq.Tools) == 0 {
		return messages, nil, nil
	}
	if tools, err = asObjects(creq.Tools); err != nil {
		return nil, nil, fmt.Errorf("mark tools: %w", err)
	}
	names := make([]string, len(creq.Tools))
	for i, t := range creq.Tools {
		if t.Function != nil {
			names[i] = t.Function.Name
		}
	}
	marker, _ := json.Marshal(cacheMarker)
	for _, i := range toolCacheIndices(names) {
		tools[i]["cache_control"] = marker
	}
	return messages, tools, nil
}

// markContent turns string content into one marked text part, or marks the
// last part; a message without content stays as it is.
func markContent(m map[string]json.RawMessage) {
	raw := m["content"]
	var text string
	if json.Unmarshal(raw, &text) == nil {
		if text == "" {
			return
		}
		m["content"], _ = json.Marshal([]map[string]any{{"type": "text", "text": text, "cache_control": cacheMarker}})
		return
	}
	var parts []map[string]json.RawMessage
	if json.Unmarshal(raw, &parts) != nil || len(parts) == 0 {
		return
	}
	parts[len(parts)-1]["cache_control"], _ = json.Marshal(cacheMarker)
	m["content"], _ = json.Marshal(parts)
}

// asObjects round-trips values through their JSON (go-openai's own
// marshalling) into objects we can add fields to.
func asObjects[T any](v []T) ([]map[string]json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out []map[string]json.RawMessage
	return out, json.Unmarshal(b, &out)
}
