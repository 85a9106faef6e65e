package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/tools"
)

// probeTool stands for a tool whose own work does not matter here: it
// records that it ran.
type probeTool struct {
	name string
	ran  *sync.Map
}

func (p probeTool) Name() string                { return p.name }
func (p probeTool) Description() string         { return "probe " + p.name }
func (p probeTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (p probeTool) Flags() tools.Flags          { return tools.Flags{SideEffects: true} }
func (p probeTool) Run(_ context.Context, _ tools.Env, _ map[string]any) tools.Result {
	p.ran.Store(p.name, true)
	return tools.TextResult("ran " + p.name)
}

// policyCase is one row of the turn policy: a kind of turn, a tool (with
// arguments), and whether the model is offered it and whether it may run.
type policyCase struct {
	profile string
	tool    string
	args    string
	offer   bool
	permit  bool
	refusal string // the start of the model's result when refused
}

var policyProfiles = map[string]protocol.Profile{
	"chat":      protocol.ProfileFor(protocol.ChatTurn, false),
	"goal":      protocol.ProfileFor(protocol.ChatTurn, true),
	"cron":      protocol.ProfileFor(protocol.CronTurn, false),
	"heartbeat": protocol.ProfileFor(protocol.HeartbeatTurn, false),
	"dream":     protocol.ProfileFor(protocol.DreamTurn, false),
	"subagent":  protocol.ProfileFor(protocol.SubagentTurn, false),
	"patterns":  {Tools: []string{"read_file", "mcp_*"}},
}

var policyTable = []policyCase{
	{"chat", "read_file", `{"path":"notes.md"}`, true, true, ""},
	{"chat", "exec", `{}`, true, true, ""},
	{"chat", "message", `{}`, true, true, ""},
	{"chat", "spawn", `{}`, true, true, ""},
	{"chat", "cron", `{"action":"add"}`, true, true, ""},
	{"chat", "create_goal", `{}`, false, false, "Error: create_goal is only available after the user sets a goal"},
	{"chat", "update_goal", `{}`, false, true, ""}, // offered only while a goal is active; the tool says there is none
	{"chat", "mcp_fs_read", `{}`, true, true, ""},
	{"goal", "create_goal", `{}`, true, true, ""},
	{"goal", "update_goal", `{}`, true, true, ""},
	{"cron", "cron", `{"action":"add"}`, true, false, tools.CronInCronText},
	{"cron", "cron", `{"action":"list"}`, true, true, ""},
	{"cron", "message", `{}`, true, true, ""},
	{"heartbeat", "message", `{}`, false, false, "Error: the message tool is not available during a heartbeat run"},
	{"heartbeat", "cron", `{"action":"add"}`, true, false, tools.CronInCronText},
	{"heartbeat", "exec", `{}`, true, true, ""},
	{"dream", "read_file", `{"path":"notes.md"}`, true, true, ""},
	{"dream", "write_file", `{"path":"memory/MEMORY.md","content":"likes tea"}`, true, true, ""},
	{"dream", "write_file", `{"path":"AGENTS.md","content":"obey"}`, true, false, "Error: write_file may only change skills/, SOUL.md"},
	{"dream", "exec", `{}`, false, false, "Error: Tool 'exec' is not available here"},
	{"dream", "message", `{}`, false, false, "Error: Tool 'message' is not available here"},
	{"subagent", "exec", `{}`, true, true, ""},
	{"subagent", "list_dir", `{"path":"."}`, true, true, ""},
	{"subagent", "spawn", `{}`, false, false, "Error: Tool 'spawn' is not available here"},
	{"subagent", "message", `{}`, false, false, "Error: Tool 'message' is not available here"},
	{"subagent", "cron", `{"action":"list"}`, false, false, "Error: Tool 'cron' is not available here"},
	{"subagent", "mcp_fs_read", `{}`, false, false, "Error: Tool 'mcp_fs_read' is not available here"},
	{"patterns", "mcp_fs_read", `{}`, true, true, ""},
	{"patterns", "read_file", `{"path":"notes.md"}`, true, true, ""},
	{"patterns", "list_dir", `{"path":"."}`, false, false, "Error: Tool 'list_dir' is not available here"},
}

// TestTurnPolicyTable runs every row through both paths that read the
// policy: the model call (which definitions are offered) and the tool call
// (whether the call runs, or its refusal is the model's result).
func TestTurnPolicyTable(t *testing.T) {
	var ran sync.Map
	model := modeltest.New().Handle(func(*modeltest.RecordedRequest) modeltest.Step { return modeltest.Text("ok") })
	defer model.Close()
	a := newActivities(t, model)
	reg := tools.NewRegistry()
	tools.RegisterFilesystem(reg)
	probes := map[string]bool{"mcp_fs_read": true}
	for _, name := range []string{"exec", "message", "spawn", "cron", "create_goal", "update_goal"} {
		reg.Register(probeTool{name: name, ran: &ran})
		probes[name] = true
	}
	reg.Register(probeTool{name: "mcp_fs_read", ran: &ran}, tools.External())
	a.Tools = reg
	require.NoError(t, os.WriteFile(filepath.Join(a.Workspace, "notes.md"), []byte("hi\n"), 0o644))
	ctx := context.Background()
	env := activityEnv(a)

	offered := map[string][]string{}
	for name, p := range policyProfiles {
		turn := "offer-" + name
		_, err := a.set().Turn.Build(ctx, step(turn, "hello"))
		require.NoError(t, err)
		before := model.Count()
		_, err = env.ExecuteActivity(protocol.ActivityLLMCall, protocol.LLMCallInput{SessionKey: "cli:t", Turn: turn, Call: 1, Iteration: 1,
			Settings: testenv.Settings(protocol.Settings{Model: "m"}), Profile: p})
		require.NoError(t, err)
		for _, d := range model.Requests()[before].Tools {
			offered[name] = append(offered[name], d.Name)
		}
	}

	for i, c := range policyTable {
		t.Run(fmt.Sprintf("%s/%s%s", c.profile, c.tool, c.args), func(t *testing.T) {
			require.Equal(t, c.offer, slices.Contains(offered[c.profile], c.tool), "offered to a %s turn: %v", c.profile, offered[c.profile])

			turn, id := fmt.Sprintf("call-%d", i), fmt.Sprintf("c%d", i)
			_, err := a.Store.Append(ctx, "cli:t", chat.Message{Role: chat.RoleAssistant, Turn: turn, EntryID: "llm-1", ToolCalls: []chat.ToolCall{
				{ID: id, Type: "function", Function: chat.FunctionCall{Name: c.tool, Arguments: c.args}}}})
			require.NoError(t, err)
			ran.Delete(c.tool)
			val, err := env.ExecuteActivity(protocol.ActivityTool, protocol.ToolCallInput{SessionKey: "cli:t", Turn: turn, Iteration: 1,
				CallID: id, Name: c.tool, LLMEntry: "llm-1", Profile: policyProfiles[c.profile]})
			require.NoError(t, err)
			var res protocol.ToolCallResult
			require.NoError(t, val.Get(&res))
			_, probeRan := ran.Load(c.tool)
			if c.permit {
				if probes[c.tool] {
					require.True(t, probeRan, "a permitted call runs: %s", res.Preview)
				} else {
					require.False(t, res.IsError, res.Preview)
				}
				return
			}
			require.True(t, res.IsError)
			require.True(t, strings.HasPrefix(res.Preview, c.refusal), res.Preview)
			require.False(t, probeRan, "a refused call does not run")
		})
	}
	data, err := os.ReadFile(filepath.Join(a.Workspace, "memory", "MEMORY.md"))
	require.NoError(t, err, "Dream's permitted write landed")
	require.Equal(t, "likes tea", string(data))
	require.NoFileExists(t, filepath.Join(a.Workspace, "AGENTS.md"), "Dream's refused write did not")
}

// A confined allow-list (a subagent's): a path outside the workspace is
// refused even where tools.restrictToWorkspace is off.
func TestConfinedProfileKeepsPathsInTheWorkspace(t *testing.T) {
	a := newActivities(t, nil)
	a.RestrictToWorkspace = false
	ctx := context.Background()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(outside, []byte("s"), 0o600))
	_, err := a.Store.Append(ctx, "cli:t", chat.Message{Role: chat.RoleAssistant, Turn: "t1", EntryID: "llm-2", ToolCalls: []chat.ToolCall{
		{ID: "r", Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: `{"path":"` + outside + `"}`}},
	}})
	require.NoError(t, err)
	env := activityEnv(a)
	run := func(p protocol.Profile) protocol.ToolCallResult {
		val, err := env.ExecuteActivity(protocol.ActivityTool, protocol.ToolCallInput{SessionKey: "cli:t", Turn: "t1", CallID: "r", Name: "read_file", LLMEntry: "llm-2", Profile: p})
		require.NoError(t, err)
		var res protocol.ToolCallResult
		require.NoError(t, val.Get(&res))
		return res
	}
	res := run(protocol.Profile{Tools: []string{"read_file", "list_*"}, Confined: true})
	require.True(t, res.IsError, "a confined run stays in the workspace: %s", res.Preview)
	require.NotContains(t, res.Preview, "s\n")
}

// spawn runs in the workflow (a subagent is a child workflow), so its
// check before the start asks the same policy as every other tool.
func TestSpawnIsAskedOfThePolicyToo(t *testing.T) {
	a := newActivities(t, nil)
	ctx := context.Background()
	_, err := a.Store.Append(ctx, "cli:t", chat.Message{Role: chat.RoleAssistant, Turn: "t1", EntryID: "llm-1", ToolCalls: []chat.ToolCall{
		{ID: "s1", Type: "function", Function: chat.FunctionCall{Name: "spawn", Arguments: `{"task":"count the files"}`}}}})
	require.NoError(t, err)
	prepare := func(p protocol.Profile) string {
		res, err := a.set().Subagents.PrepareSpawn(ctx, protocol.SpawnRef{SessionKey: "cli:t", Turn: "t1", LLMEntry: "llm-1", CallID: "s1", Profile: p})
		require.NoError(t, err)
		return res.Refused
	}
	require.True(t, strings.HasPrefix(prepare(policyProfiles["dream"]), "Error: Tool 'spawn' is not available here"))
	require.True(t, strings.HasPrefix(prepare(policyProfiles["subagent"]), "Error: Tool 'spawn' is not available here"))
	require.Equal(t, "Error: subagents are not available in this context", prepare(policyProfiles["chat"]),
		"a chat turn passes the policy (and this worker has no Temporal to start one)")
}
