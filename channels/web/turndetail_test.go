package web

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

const runA = "0b7e4a52-1c1f-4f5e-9d7a-5a0c1d2e3f40"

func TestTurnDetailsCarryTheJournaledCalls(t *testing.T) {
	c, _, base := startChannel(t, "")
	c.UseTemporal(fixedTurns{}, "http://127.0.0.1:8233", "default") // answers Now only: no history to read
	_, err := c.store.Append(context.Background(), "web:x",
		chat.Message{Role: chat.RoleUser, Content: "run it", Turn: runA, EntryID: "u"},
		chat.Message{Role: chat.RoleAssistant, Turn: runA, EntryID: "a1", ToolCalls: []chat.ToolCall{
			{ID: "k1", Type: "function", Function: chat.FunctionCall{Name: "exec", Arguments: `{"command":"false"}`}},
			{ID: "k2", Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: `{"path":"a"}`}},
			{ID: "k3", Type: "function", Function: chat.FunctionCall{Name: "spawn", Arguments: `{"task":"count"}`}}}},
		chat.Message{Role: chat.RoleTool, ToolCallID: "k1", Name: "exec", Content: "no\n\nExit code: 1", Turn: runA, EntryID: "t1"},
		chat.Message{Role: chat.RoleTool, ToolCallID: "k2", Name: "read_file", Content: "hello", Turn: runA, EntryID: "t2"},
		chat.Message{Role: chat.RoleUser, Content: "other turn", Turn: "another-run-0000", EntryID: "u"},
		chat.Message{Role: chat.RoleAssistant, Turn: "another-run-0000", EntryID: "a1", ToolCalls: []chat.ToolCall{
			{ID: "k9", Type: "function", Function: chat.FunctionCall{Name: "exec", Arguments: `{}`}}}})
	require.NoError(t, err)

	a := call(t, http.MethodGet, base+"/api/turn?chat=x&turn="+runA, "")
	require.Equal(t, http.StatusOK, a.status, a.body)
	var d turnDetails
	require.NoError(t, json.Unmarshal([]byte(a.body), &d))
	one := 1
	require.Equal(t, map[string]journalCall{
		"k1": {Name: "exec", Args: `{"command":"false"}`, Result: "no\n\nExit code: 1", ExitCode: &one},
		"k2": {Name: "read_file", Args: `{"path":"a"}`, Result: "hello"},
		"k3": {Name: "spawn", Args: `{"task":"count"}`, Subagent: protocol.SubagentID(runA, "k3")},
	}, d.Calls, "this turn's calls only, an exec's exit code read from its result, a spawn's subagent as the turn named it")
	require.Equal(t, "http://127.0.0.1:8233/namespaces/default/workflows/turn%2Fweb:x/"+runA+"/history", d.Inspect)
	require.Nil(t, d.Turn)
	require.Equal(t, "this gateway does not reach Temporal", d.Unavailable)

	require.Equal(t, http.StatusBadRequest, call(t, http.MethodGet, base+"/api/turn?chat=x&turn=../../etc", "").status)
	require.Equal(t, http.StatusBadRequest, call(t, http.MethodGet, base+"/api/turn?session=x&turn="+runA, "").status)
	require.Equal(t, http.StatusForbidden, call(t, http.MethodGet, base+"/api/turn?chat=x&turn="+runA, "", "Origin", "http://evil.example").status)
	require.Equal(t, http.StatusMethodNotAllowed, call(t, http.MethodPost, base+"/api/turn?chat=x&turn="+runA, "").status)
}
