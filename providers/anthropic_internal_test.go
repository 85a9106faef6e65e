package providers

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
)

func TestAnthropicThinkingFromEffort(t *testing.T) {
	temp := 0.1
	cases := []struct {
		model, effort string
		maxTokens     int
		thinking      string // JSON, "" for none
		output        string
		wantMax       int64
		temperature   *float64
	}{
		{"claude-sonnet-4-5", "", 1024, "", "", 1024, &temp},
		{"claude-sonnet-4-5", "low", 1024, `{"type":"enabled","budget_tokens":1024}`, "", 5120, ptrTo(1.0)},
		{"claude-sonnet-4-5", "medium", 1024, `{"type":"enabled","budget_tokens":4096}`, "", 8192, ptrTo(1.0)},
		{"claude-sonnet-4-5", "high", 16000, `{"type":"enabled","budget_tokens":16000}`, "", 20096, ptrTo(1.0)},
		{"claude-sonnet-4-5", "minimal", 1024, `{"type":"enabled","budget_tokens":4096}`, "", 8192, ptrTo(1.0)},
		{"claude-sonnet-4-5", "adaptive", 1024, `{"type":"adaptive"}`, "", 1024, ptrTo(1.0)},
		{"claude-sonnet-4-5", "none", 1024, "", "", 1024, &temp},
		{"claude-opus-4-5-20251101", "high", 1024, `{"type":"enabled","budget_tokens":8192}`, "", 12288, ptrTo(1.0)},
		{"claude-opus-4-7", "high", 1024, `{"type":"adaptive"}`, `{"effort":"high"}`, 1024, nil},
		{"claude-opus-4-7", "", 1024, "", "", 1024, nil},
		{"claude-opus-5", "none", 1024, `{"type":"disabled"}`, "", 1024, nil},
		{"claude-sonnet-5-0", "adaptive", 0, `{"type":"adaptive"}`, "", defaultAnthropicMaxTokens, nil},
		{"claude-mythos-preview", "low", 1024, `{"type":"enabled","budget_tokens":1024}`, "", 5120, nil},
	}
	for _, tc := range cases {
		s := anthropicThinking(tc.model, tc.effort, tc.maxTokens, &temp)
		got, err := json.Marshal(s.thinking)
		require.NoError(t, err)
		if tc.thinking == "" {
			require.True(t, s.thinking.OfEnabled == nil && s.thinking.OfAdaptive == nil && s.thinking.OfDisabled == nil, "%s %s: %s", tc.model, tc.effort, got)
		} else {
			require.JSONEq(t, tc.thinking, string(got), "%s %s", tc.model, tc.effort)
		}
		if tc.output != "" {
			out, err := json.Marshal(s.output)
			require.NoError(t, err)
			require.JSONEq(t, tc.output, string(out), "%s %s", tc.model, tc.effort)
		} else {
			require.Empty(t, s.output.Effort)
		}
		require.Equal(t, tc.wantMax, s.maxTokens, "%s %s", tc.model, tc.effort)
		require.Equal(t, tc.temperature, s.temperature, "%s %s", tc.model, tc.effort)
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestClaudeVersions(t *testing.T) {
	require.True(t, claudeAtLeast("claude-opus-4-7", adaptiveOnlySince))
	require.True(t, claudeAtLeast("anthropic/claude-opus-4-10", adaptiveOnlySince))
	require.False(t, claudeAtLeast("claude-opus-4-6", adaptiveOnlySince))
	require.False(t, claudeAtLeast("claude-opus-4-20250514", adaptiveOnlySince), "a date is no minor version")
	require.False(t, claudeAtLeast("claude-haiku-9", adaptiveOnlySince), "a family without the rule")
	require.False(t, claudeAtLeast("claude-3-5-sonnet", adaptiveOnlySince))
	require.True(t, claudeAtLeast("claude-sonnet-5", thinksByDefaultSince))
}

func TestAnthropicHistoryShape(t *testing.T) {
	call := chat.ToolCall{ID: "call|1.x", Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: "not json"}}
	p, err := toAnthropicPrompt(Request{Messages: []chat.Message{
		{Role: chat.RoleSystem, Content: "sys"},
		{Role: chat.RoleAssistant, Content: "left over from a cut history"},
		{Role: chat.RoleUser, Content: ""},
		{Role: chat.RoleUser, Content: "second"},
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{call, call}},
		{Role: chat.RoleTool, ToolCallID: "call|1.x", Content: "one"},
		{Role: chat.RoleTool, ToolCallID: "call|1.x", Content: ""},
		{Role: chat.RoleAssistant, Content: "a prefill Anthropic refuses"},
	}})
	require.NoError(t, err)
	b, err := json.Marshal(p.turns[0].blocks)
	require.NoError(t, err)
	require.JSONEq(t, `[{"type":"text","text":"(conversation continued)"}]`, string(b), "a user turn comes first")
	require.Len(t, p.turns, 5, "opener, assistant, merged users, calls, results; the trailing assistant dropped")
	roles := []string{}
	for _, turn := range p.turns {
		roles = append(roles, turn.role)
	}
	require.Equal(t, []string{"user", "assistant", "user", "assistant", "user"}, roles)
	b, err = json.Marshal(p.turns[2].blocks)
	require.NoError(t, err)
	require.JSONEq(t, `[{"type":"text","text":"(empty)"},{"type":"text","text":"second"}]`, string(b))
	calls := p.turns[3].blocks
	require.Len(t, calls, 2)
	first, second := calls[0].OfToolUse, calls[1].OfToolUse
	require.Regexp(t, `^call_1_x_[0-9a-f]{8}$`, first.ID, "pipes and dots are not allowed in ids")
	require.Equal(t, first.ID+"__dedupe_2", second.ID, "a repeated id is made unique")
	require.JSONEq(t, `{}`, string(first.Input.(json.RawMessage)), "arguments that are not an object replay as {}")
	results := p.turns[4].blocks
	require.Equal(t, first.ID, results[0].OfToolResult.ToolUseID)
	require.Equal(t, second.ID, results[1].OfToolResult.ToolUseID)
	b, err = json.Marshal(results[1])
	require.NoError(t, err)
	require.Contains(t, string(b), `"text":"(empty)"`, "a blank result is sent as (empty)")
}

func TestAnthropicToolResultsFollowTheirCalls(t *testing.T) {
	call := chat.ToolCall{ID: "dup", Type: "function", Function: chat.FunctionCall{Name: "f", Arguments: `{"a":1}`}}
	p, err := toAnthropicPrompt(Request{Messages: []chat.Message{
		{Role: chat.RoleUser, Content: "go"},
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{call, call}},
		{Role: chat.RoleTool, ToolCallID: "dup", Content: "first"},
		{Role: chat.RoleTool, ToolCallID: "dup", Content: "second"},
	}})
	require.NoError(t, err)
	require.Len(t, p.turns, 3)
	uses, results := p.turns[1].blocks, p.turns[2].blocks
	require.Equal(t, uses[0].OfToolUse.ID, results[0].OfToolResult.ToolUseID)
	require.Equal(t, uses[1].OfToolUse.ID, results[1].OfToolResult.ToolUseID, "each result answers its own call")
	require.NotEqual(t, results[0].OfToolResult.ToolUseID, results[1].OfToolResult.ToolUseID)
}
