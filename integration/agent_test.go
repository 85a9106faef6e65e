package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

func TestAgentPrintsScriptedReply(t *testing.T) {
	dev := testenv.StartDevServer(t)
	for _, stream := range []string{"true", "false"} {
		t.Run("stream="+stream, func(t *testing.T) {
			model := modeltest.New(modeltest.Text("Hello from the scripted model!"))
			defer model.Close()
			model.RequireKey("test-key")
			home := testenv.NewHome(t, model.URL(), nil)
			out, errOut, code := runNanobot(t, home.Env(dev.Addr, "NANOBOT_STREAM="+stream), "agent", "-m", "hello")
			require.Equal(t, 0, code, "stderr: %s", errOut)
			require.Equal(t, "Hello from the scripted model!\n", out)
			require.Equal(t, 1, model.Count())
			req := model.Requests()[0]
			require.Equal(t, stream == "true", req.Stream)
			require.Equal(t, "test-model", req.Model)
			require.Equal(t, chat.RoleSystem, req.Messages[0].Role)
			last := req.Messages[len(req.Messages)-1]
			require.Equal(t, chat.RoleUser, last.Role)
			require.True(t, strings.HasPrefix(last.Content, "hello\n\n[Runtime Context"), last.Content)
			require.Contains(t, last.Content, "Channel: cli\nChat ID: direct")
			names := map[string]bool{}
			for _, d := range req.Tools {
				names[d.Name] = true
			}
			require.True(t, names["read_file"] && names["write_file"] && names["list_dir"], "tools offered: %v", names)

			_, msgs := sessionLines(t, home, "cli:direct")
			require.Len(t, msgs, 2)
			require.Equal(t, "hello", msgs[0].Content)
			require.Equal(t, "Hello from the scripted model!", msgs[1].Content)
			testenv.RecordHistory(t, dev.Client, "turn/cli:direct", "", "text_reply_stream_"+stream)
		})
	}
}

func TestAgentToolCallTurnWritesSession(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "call_w", Name: "write_file", Args: `{"path":"notes/todo.txt","content":"buy milk\n"}`}),
		modeltest.ToolCalls(
			modeltest.Call{ID: "call_r", Name: "read_file", Args: `{"path":"notes/todo.txt"}`},
			modeltest.Call{ID: "call_l", Name: "list_dir", Args: `{"path":"notes"}`}),
		modeltest.Text("Saved your note: buy milk."),
	)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	out, errOut, code := runNanobot(t, home.Env(dev.Addr), "agent", "-m", "remember to buy milk", "-s", "cli:notes")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	require.Equal(t, "↳ write_file notes/todo.txt\n↳ read_file notes/todo.txt\n↳ list_dir notes\nSaved your note: buy milk.\n", out,
		"the parallel batch's lines in the model's order")

	data, err := os.ReadFile(filepath.Join(home.Workspace, "notes", "todo.txt"))
	require.NoError(t, err)
	require.Equal(t, "buy milk\n", string(data))

	meta, msgs := sessionLines(t, home, "cli:notes")
	require.Equal(t, "cli:notes", meta["key"])
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	require.Equal(t, []string{"user", "assistant", "tool", "assistant", "tool", "tool", "assistant"}, roles)
	require.Equal(t, "remember to buy milk", msgs[0].Content)
	require.Equal(t, "write_file", msgs[1].ToolCalls[0].Function.Name)
	require.Equal(t, "call_w", msgs[2].ToolCallID)
	require.Contains(t, msgs[2].Content, "notes/todo.txt")
	require.Equal(t, "call_r", msgs[4].ToolCallID)
	require.Contains(t, msgs[4].Content, "buy milk")
	require.Equal(t, "call_l", msgs[5].ToolCallID)
	require.Contains(t, msgs[5].Content, "todo.txt")
	require.Equal(t, "Saved your note: buy milk.", msgs[6].Content)
	require.Positive(t, msgs[6].LatencyMS)

	// The third request saw both tool results, each once.
	reqs := model.Requests()
	require.Len(t, reqs, 3)
	results := 0
	for _, m := range reqs[2].Messages {
		if m.Role == chat.RoleTool {
			results++
		}
	}
	require.Equal(t, 3, results)
	testenv.RecordHistory(t, dev.Client, "turn/cli:notes", "", "tool_round_trip")
}

func TestAgentFailsWithOneLineReason(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(modeltest.Error(401, "invalid_api_key", "Incorrect API key provided"))
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	out, errOut, code := runNanobot(t, home.Env(dev.Addr), "agent", "-m", "hello")
	require.Equal(t, 1, code)
	require.Empty(t, out)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	require.Contains(t, lines[len(lines)-1], "Incorrect API key provided")
	require.Equal(t, 1, model.Count(), "a 401 is not retried")
	testenv.RecordHistory(t, dev.Client, "turn/cli:direct", "", "model_error")
}

func TestAgentWithoutModelSaysWhatToSet(t *testing.T) {
	home := testenv.NewHome(t, "", map[string]any{
		"providers": map[string]any{},
		"agents":    map[string]any{"defaults": map[string]any{"model": "gpt-4o", "provider": "auto"}},
	})
	_, errOut, code := runNanobot(t, home.Env("127.0.0.1:1"), "agent", "-m", "hello")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "OPENAI_API_KEY")
	require.Contains(t, errOut, "apiKey")
}

func TestAgentSlashCommandShortcut(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New()
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	out, errOut, code := runNanobot(t, home.Env(dev.Addr), "agent", "-m", "/neaw")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	require.Equal(t, "Unknown command \"/neaw\". Did you mean \"/new\"?\n", out)
	require.Zero(t, model.Count(), "commands never reach the model")
	_, msgs := sessionLines(t, home, "cli:direct")
	require.Len(t, msgs, 2)
	require.True(t, msgs[0].Command && msgs[1].Command)
	testenv.RecordHistory(t, dev.Client, "turn/cli:direct", "", "command_shortcut")
}

func TestAgentShowsReasoningOnlyWhenAsked(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(modeltest.Reasoning("weighing options").Text("The answer."), modeltest.Reasoning("again").Text("Second answer."))
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	out, errOut, code := runNanobot(t, home.Env(dev.Addr), "agent", "-m", "think", "--show-reasoning")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "\x1b[2mweighing options\x1b[0mThe answer.\n", out)
	out, errOut, code = runNanobot(t, home.Env(dev.Addr), "agent", "-m", "think again")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "Second answer.\n", out, "reasoning stays out of the reply")
	_, msgs := sessionLines(t, home, "cli:direct")
	require.Equal(t, "The answer.", msgs[1].Content)
	require.Equal(t, "weighing options", msgs[1].ReasoningContent)
}

func TestMessageToolReachesTheChat(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New(
		modeltest.ToolCalls(modeltest.Call{ID: "msg1", Name: "message", Args: `{"content":"progress: halfway"}`}),
		modeltest.Text("done"),
	)
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	out, errOut, code := runNanobot(t, home.Env(dev.Addr), "agent", "-m", "work and report")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "progress: halfway\ndone\n", out, "the final answer streamed; it is journaled, not delivered again")
	_, msgs := sessionLines(t, home, "cli:direct")
	require.Equal(t, "Message sent to cli:direct", msgs[2].Content)
	require.Equal(t, "done", msgs[len(msgs)-1].Content)
}
