package integration

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestTurnListAndShow follows a turn with the CLI: while it runs (the
// state query) and once it finished (the history), and lists it.
func TestTurnListAndShow(t *testing.T) {
	r := newRig(t, protocol.Settings{})
	env := r.home.Env(r.dev.Addr)

	r.model.Script(
		modeltest.ToolCalls(modeltest.Call{ID: "c1", Name: "list_dir", Args: `{"path":"."}`}).Usage(120, 8),
		modeltest.Block().Text("all listed").Usage(200, 4),
	)
	r.send(t, "show", "what is here?")
	require.Eventually(t, func() bool { return r.model.Waiting() == 1 }, time.Minute, 50*time.Millisecond, "the second model call is in flight")
	out, stderr, code := runNanobot(t, env, "turn", "show", "cli:show")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "Status:   running, now in RUN")
	require.Contains(t, out, "Message:  what is here?")
	require.Contains(t, out, `tool list_dir {"path":"."}`)
	require.Regexp(t, `#2 llm test-model\s+running`, out)
	r.model.Release()
	res := r.result(t, "show")
	require.Equal(t, "all listed", res.ReplyPreview)

	out, stderr, code = runNanobot(t, env, "turn", "show", "turn/cli:show")
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{
		"Status:   completed after", "RESTORE", "RUN", "RESPOND",
		"#1 llm test-model", "→ 1 tool call (tool_calls), 120 in / 8 out tokens",
		"→ answer (stop), 200 in / 4 out tokens",
		"Tokens:   320 in / 12 out tokens", `Reply:    "all listed" (completed)`,
	} {
		require.Contains(t, out, want)
	}
	require.Regexp(t, `tool list_dir \{"path":"\."\}\s+\d+ms ok`, out)

	out, stderr, code = runNanobot(t, env, "turn", "list", "--session", "cli:show")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "turn/cli:show")
	require.Contains(t, out, "completed")

	_, stderr, code = runNanobot(t, env, "turn", "show", "cli:nobody")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "no turn turn/cli:nobody")
	_, _, code = runNanobot(t, env, "turn", "list", "--limit", "0")
	require.Equal(t, 2, code)
}
