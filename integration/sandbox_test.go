package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/peer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/tools"
)

const sandboxKey = "sk-SANDBOX-e2e-0123456789abcdef"

// toolResults are the tool messages of the model's last request, by call ID.
func toolResults(t *testing.T, model *modeltest.Server) map[string]string {
	t.Helper()
	reqs := model.Requests()
	require.NotEmpty(t, reqs)
	out := map[string]string{}
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == chat.RoleTool {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

// execCalls script one exec call per command, then a closing answer.
func execCalls(commands map[string]string, order ...string) []modeltest.Step {
	var steps []modeltest.Step
	for _, id := range order {
		args, _ := json.Marshal(map[string]string{"command": commands[id]})
		steps = append(steps, modeltest.ToolCalls(modeltest.Call{ID: id, Name: "exec", Args: string(args)}))
	}
	return append(steps, modeltest.Text("done"))
}

// sandboxHome is a home whose config holds the provider key, with the key
// also exported in nanobot's environment, and exec's sandbox set as given.
func sandboxHome(t *testing.T, model *modeltest.Server, sandbox string) *testenv.Home {
	t.Helper()
	return testenv.NewHome(t, model.URL(), map[string]any{
		"providers": map[string]any{"custom": map[string]any{"apiKey": sandboxKey, "apiBase": model.URL()}},
		"tools":     map[string]any{"exec": map[string]any{"enable": true, "sandbox": sandbox}},
	})
}

// Under bwrap, the model that runs `cat` on the config and `env` learns
// neither the key nor the config, and cannot write outside the workspace.
func TestSandboxKeepsTheConfigAndTheHomeOutOfExecsReach(t *testing.T) {
	if err := tools.NewSandbox(tools.SandboxLayout{}).Ready(); err != nil {
		peer.Missing(t, peer.Bwrap, err.Error()+" (make bwrap installs bubblewrap)")
	}
	peer.Used(t, peer.Bwrap)
	dev := testenv.StartDevServer(t)
	model := modeltest.New()
	defer model.Close()
	home := sandboxHome(t, model, "bwrap")
	outside := filepath.Join(home.Dir, "outside.txt")
	commands := map[string]string{
		"cat":     "cat " + home.ConfigPath,
		"env":     "env",
		"outside": "echo x > " + outside,
		"inside":  "echo x > inside.txt && echo wrote",
	}
	model.Script(execCalls(commands, "cat", "env", "outside", "inside")...)

	out, errOut, code := runNanobot(t, home.Env(dev.Addr, "OPENAI_API_KEY="+sandboxKey, "NANOBOT_SANDBOX_TEST_KEY="+sandboxKey), "agent", "-m", "look around")
	require.Equal(t, 0, code, "stdout: %s\nstderr: %s", out, errOut)
	require.NotContains(t, errOut, "cannot run", "bwrap runs here")

	results := toolResults(t, model)
	require.Len(t, results, 4)
	for id, text := range results {
		require.NotContains(t, text, sandboxKey, "the key in the result of %s", id)
		require.NotContains(t, text, "[redacted]", "%s: the sandbox, not the mask, kept it out", id)
	}
	require.Contains(t, results["cat"], "No such file or directory")
	require.NotContains(t, results["cat"], `"providers"`, "the config's contents stay hidden")
	require.Contains(t, results["env"], "HOME="+home.Workspace)
	require.NotContains(t, results["env"], "OPENAI_API_KEY")
	require.Contains(t, results["outside"], "Read-only file system")
	require.Contains(t, results["outside"], "Exit code:")
	require.Equal(t, "wrote\n", results["inside"])
	for _, r := range model.Requests() {
		require.NotContains(t, string(r.Body), sandboxKey[3:], "no request body carries the key")
	}

	require.NoFileExists(t, outside)
	data, err := os.ReadFile(filepath.Join(home.Workspace, "inside.txt"))
	require.NoError(t, err)
	require.Equal(t, "x\n", string(data))
}

// Without the sandbox, exec can read the config, but the key in what it
// printed reaches the model masked.
func TestWithoutTheSandboxTheKeyReachesTheModelMasked(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New()
	defer model.Close()
	home := sandboxHome(t, model, "")
	model.Script(execCalls(map[string]string{"cat": "cat " + home.ConfigPath}, "cat")...)

	out, errOut, code := runNanobot(t, home.Env(dev.Addr), "agent", "-m", "read the config")
	require.Equal(t, 0, code, "stdout: %s\nstderr: %s", out, errOut)
	cat := toolResults(t, model)["cat"]
	require.Contains(t, cat, `"providers"`, "the command ran unsandboxed and printed the config")
	require.Contains(t, cat, `"apiKey": "[redacted]"`)
	for _, r := range model.Requests() {
		require.NotContains(t, string(r.Body), sandboxKey[3:])
	}
	_, msgs := sessionLines(t, home, "cli:direct")
	for _, m := range msgs {
		require.NotContains(t, m.Content, sandboxKey, "the session journal holds the masked text")
	}
}

// `sandbox: "bwrap"` where bwrap cannot run: a clear error at start and an
// error result for the model on the exec call; the command never runs.
func TestSandboxThatCannotRunRefusesExec(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New()
	defer model.Close()
	home := sandboxHome(t, model, "bwrap")
	fake := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(fake, "bwrap"), []byte("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"), 0o755))
	model.Script(execCalls(map[string]string{"run": "echo ran > marker"}, "run")...)

	env := home.Env(dev.Addr, "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, errOut, code := runNanobot(t, env, "agent", "-m", "run it")
	require.Equal(t, 0, code, "stdout: %s\nstderr: %s", out, errOut)
	require.Contains(t, errOut, `! tools.exec.sandbox is "bwrap" but bwrap cannot run here`)
	require.Contains(t, errOut, "Permission denied")
	run := toolResults(t, model)["run"]
	require.Contains(t, run, "Error: the command was not run")
	require.Contains(t, run, "bwrap: setting up uid map: Permission denied")
	require.NoFileExists(t, filepath.Join(home.Workspace, "marker"))
}

// A bind that would expose the config stops nanobot at start, naming the key.
func TestSandboxBindCoveringTheConfigIsRefusedAtStart(t *testing.T) {
	home := testenv.NewHome(t, "http://127.0.0.1:1/v1", map[string]any{
		"tools": map[string]any{"exec": map[string]any{"sandbox": "bwrap", "sandboxRoBinds": []string{"/usr", "/"}}},
	})
	_, errOut, code := runNanobot(t, home.Env("127.0.0.1:1"), "agent", "-m", "hi")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, `tools.exec.sandboxRoBinds[1]: "/" would expose the config folder `+filepath.Dir(home.ConfigPath))
}
