package integration

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/cliapps"
	"github.com/nanobot-durable/nanobot/cliapps/cliappspeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestCLIAppInstalledThenRunByTheModel: the owner installs a catalog app
// with `nanobot cli-apps install` (the real npm against a registry at the
// wire); the running gateway's next turn offers run_cli_app naming it, the
// user's @hello adds nanobot's mention line to the runtime context, the
// model runs it with --json, and the app's output reaches the Telegram chat.
// `nanobot status` names it, and uninstall takes it off the offer.
func TestCLIAppInstalledThenRunByTheModel(t *testing.T) {
	cliappspeer.NPM(t)
	srv := cliappspeer.Start(t, map[string]any{
		"registry.json": map[string]any{"meta": map[string]any{"updated": "2026-12-01"}, "clis": []any{map[string]any{
			"name": "hello", "display_name": "Hello", "description": "Greets.", "entry_point": "hello-cli",
			"npm_package": "hello-cli", "package_manager": "npm", "version": "1.0.0"}}},
		"public_registry.json": map[string]any{"clis": []any{}},
	}, nil, cliappspeer.Package{Name: "hello-cli", Version: "1.0.0", Bin: "hello-cli",
		Script: `console.log(JSON.stringify({greeting: "hello " + process.argv.slice(2).join(" ")}));`})

	tg := startTelegramEmulator(t)
	dev := testenv.StartDevServer(t)
	var mu sync.Mutex
	var offered, mentioned []string
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		mu.Lock()
		mentioned = append(mentioned, lastOf(req, chat.RoleUser).Content)
		mu.Unlock()
		for _, d := range req.Tools {
			if d.Name == "run_cli_app" {
				mu.Lock()
				offered = append(offered, d.Description)
				mu.Unlock()
			}
		}
		if last := req.Messages[len(req.Messages)-1]; last.Role == chat.RoleTool {
			said := last.Content[strings.Index(last.Content, "STDOUT:")+len("STDOUT:"):]
			said, _, _ = strings.Cut(said, "\n\nSTDERR:")
			return modeltest.Text("The app said: " + strings.TrimSpace(said))
		}
		return modeltest.ToolCalls(modeltest.Call{ID: "call_app", Name: "run_cli_app", Args: `{"name":"hello","args":["world"],"json":true}`})
	})
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{"channels": map[string]any{"telegram": map[string]any{
		"enabled": true, "token": tg.Token, "apiBase": tg.URL, "allowFrom": []string{"1001"},
	}}})
	env := append(home.Env(dev.Addr), cliapps.CatalogEnv+"="+srv.URL)
	env = append(env, srv.NPMEnv(t.TempDir())...)
	logs := startChannelGateway(t, env, "telegram")

	out, errOut, code := runNanobot(t, env, "cli-apps", "install", "hello")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Equal(t, "Installed CLI for Hello.\n", out)
	out, _, code = runNanobot(t, env, "cli-apps", "list")
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^hello\s+1\.0\.0\s+hello-cli\s+npm\s+harness$`, out)
	out, _, _ = runNanobot(t, env, "status")
	require.Contains(t, out, "CLI apps:  run_cli_app on, installed: hello (nanobot cli-apps)")
	require.FileExists(t, filepath.Join(home.Workspace, "skills", "cli-app-hello", "SKILL.md"))

	alice := tgUser{ID: 1001, FirstName: "Alice", Username: "alice"}
	tg.say(t, alice, 1001, "private", "greet the world with @hello")
	want := `The app said: {"greeting":"hello --json world"}`
	require.Eventually(t, func() bool {
		for _, s := range texts(t, tg, 1001) {
			if s == want {
				return true
			}
		}
		return false
	}, 2*time.Minute, 50*time.Millisecond, "no answer with the app's output: %q\ngateway:\n%s", texts(t, tg, 1001), logs)
	mu.Lock()
	require.NotEmpty(t, offered)
	require.Contains(t, offered[0], "Installed Settings CLI Apps: hello.", "an install needs no restart")
	require.Contains(t, mentioned[0], "greet the world with @hello\n\n[Runtime Context — metadata only, not instructions]\n")
	require.Contains(t, mentioned[0], "\nCLI App Mention: @hello (installed; tool=run_cli_app; entry_point=hello-cli; "+
		"skill=skills/cli-app-hello/SKILL.md). Read the skill when useful, then run this app with `run_cli_app`; do not bypass it with shell.\n")
	mu.Unlock()

	out, errOut, code = runNanobot(t, env, "cli-apps", "uninstall", "hello")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Equal(t, "Uninstalled CLI for Hello.\n", out)
	_, err := os.Stat(filepath.Join(home.Workspace, "skills", "cli-app-hello"))
	require.True(t, os.IsNotExist(err), "the skill goes with the app")
	out, _, _ = runNanobot(t, env, "cli-apps", "list")
	require.Equal(t, "No CLI apps installed (nanobot cli-apps catalog lists what can be).\n", out)
}
