package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/tools"
)

// sandboxBenchTurns is how many one-exec turns each side runs per command.
const sandboxBenchTurns = 20

// sandboxCommand is one exec the B8 rows time, and what its output must hold.
type sandboxCommand struct{ what, command, want string }

// sandboxCommands are B8's two commands: a trivial one, and one HTTP GET to a
// server on the host's 127.0.0.1 (the bench's config whitelists that one
// address for the proxy; inside the sandbox the request goes through it).
func sandboxCommands(t *testing.T) []sandboxCommand {
	addr := testenv.ServeHTTP(t, "127.0.0.1:0", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("pong")) })
	cmds := []sandboxCommand{{"`true`", "true", ""}}
	if _, err := exec.LookPath("curl"); err == nil {
		// --noproxy '': inside, 127.0.0.1 is in NO_PROXY (the sandbox's own loopback); outside no proxy is set.
		cmds = append(cmds, sandboxCommand{"one HTTP GET to a 127.0.0.1 server (through the proxy when sandboxed)",
			"curl -sS --noproxy '' http://" + addr + "/", "pong"})
	}
	return cmds
}

// sandboxBenchModel answers "sbx <n>" with one exec of command n, then "done".
func sandboxBenchModel(cmds []sandboxCommand) func(req *modeltest.RecordedRequest) modeltest.Step {
	return func(req *modeltest.RecordedRequest) modeltest.Step {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == chat.RoleTool || !strings.HasPrefix(last.Content, "sbx ") {
			return modeltest.Text("done")
		}
		n, _ := strconv.Atoi(strings.Fields(last.Content)[1])
		args, _ := json.Marshal(map[string]string{"command": cmds[n].command})
		return modeltest.ToolCalls(modeltest.Call{ID: fmt.Sprintf("x%d", time.Now().UnixNano()), Name: "exec", Args: string(args)})
	}
}

// sandboxRows are B8: the exec round trip in the default sandbox beside the same with
// tools.exec.sandbox "none", as a one-exec turn through a gateway on a file database (as
// `make run` gives users) and as the exec tool call alone in this process.
func (b *benchEnv) sandboxRows(t *testing.T, ctx context.Context) []benchRow {
	if err := tools.NewSandbox(tools.SandboxLayout{}).Ready(); err != nil {
		return []benchRow{{"B8", "exec round trip, sandboxed beside not: not measured, " + err.Error(), "-", "-", "-", "", ""}}
	}
	cmds := sandboxCommands(t)
	model := modeltest.New().Handle(sandboxBenchModel(cmds))
	t.Cleanup(model.Close)
	dev := startLeverServer(t, serverLever{})
	defer dev.Stop()
	saved := b.dev
	b.dev = dev
	defer func() { b.dev = saved }()

	turns := map[string][]time.Duration{} // by sandbox setting, one p50 per command
	alone := map[string][]time.Duration{}
	for _, mode := range []string{"auto", "none"} {
		home := testenv.NewHome(t, model.URL(), map[string]any{"tools": map[string]any{
			"ssrfWhitelist": []string{"127.0.0.1/32"}, "exec": map[string]any{"sandbox": mode}}})
		gw, _, _ := startGateway(t, dev, home.Env(dev.Addr))
		for n, c := range cmds {
			var ds []time.Duration
			for i := 0; i <= sandboxBenchTurns; i++ {
				d, _, err := b.durable(ctx, fmt.Sprintf("sbx-%s-%d-%d", mode, n, i%4), fmt.Sprintf("sbx %d", n), b.set)
				require.NoError(t, err)
				if i == 0 {
					require.Contains(t, lastToolResult(t, model), c.want, "%s, sandbox %s", c.what, mode)
					continue // the first turn warms the session and starts the proxy
				}
				ds = append(ds, d)
			}
			turns[mode] = append(turns[mode], percentile(ds, .5))
			alone[mode] = append(alone[mode], execAlone(t, home, mode, c))
		}
		stopGateway(gw)
	}
	var rows []benchRow
	for n, c := range cmds {
		s, u := turns["auto"][n], turns["none"][n]
		rows = append(rows, benchRow{"B8", "exec round trip, " + c.what + ": one-exec turn through the gateway, file database, p50 (baseline column: tools.exec.sandbox \"none\")",
			ms(s), ms(u), ratio(s.Seconds(), u.Seconds()), "", ""})
		s, u = alone["auto"][n], alone["none"][n]
		rows = append(rows, benchRow{"B8", "… the exec tool call alone, in this process, p50", ms(s), ms(u), ratio(s.Seconds(), u.Seconds()), "", ""})
	}
	return rows
}

// execAlone is the p50 of the exec tool called directly, built from the home's config as the worker builds it.
func execAlone(t *testing.T, home *testenv.Home, mode string, c sandboxCommand) time.Duration {
	opts := tools.DefaultExecOptions()
	ws, err := filepath.EvalSymlinks(home.Workspace)
	require.NoError(t, err)
	if mode != "none" {
		opts.Sandbox = tools.NewSandbox(tools.SandboxLayout{Workspace: ws, Hidden: []string{filepath.Dir(home.ConfigPath)}, Network: true})
		guard, err := tools.NewSSRFGuard([]string{"127.0.0.1/32"}, nil)
		require.NoError(t, err)
		opts.Sandbox.Egress = tools.EgressRules{Guard: guard}
		defer opts.Sandbox.Close()
	}
	ex, err := tools.NewExec(opts)
	require.NoError(t, err)
	env := tools.Env{Workspace: ws, RestrictToWorkspace: true, SessionKey: "cli:b8", Turn: "b8"}
	var ds []time.Duration
	for i := 0; i <= sandboxBenchTurns; i++ {
		start := time.Now()
		res := ex.Run(context.Background(), env, map[string]any{"command": c.command})
		require.False(t, res.IsError, res.Text)
		require.Contains(t, res.Text, c.want)
		if i > 0 {
			ds = append(ds, time.Since(start))
		}
	}
	return percentile(ds, .5)
}

// lastToolResult is the tool message of the model's latest request.
func lastToolResult(t *testing.T, model *modeltest.Server) string {
	reqs := model.Requests()
	require.NotEmpty(t, reqs)
	msgs := reqs[len(reqs)-1].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == chat.RoleTool {
			return msgs[i].Content
		}
	}
	t.Fatalf("no tool result in the model's last request")
	return ""
}
