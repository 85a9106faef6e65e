package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/owner"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/session"
	"github.com/nanobot-durable/nanobot/tools"
)

// riskyExec is a command the exec deny list refuses; with approval on it asks.
const riskyExec = `mkdir -p build && rm -rf build && echo ran >> ran.txt`

// approvalModel calls riskyExec, then says what the tool result was.
func approvalModel() *modeltest.Server {
	return modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			return modeltest.Text("Tool said: " + last.Content)
		}
		return modeltest.ToolCalls(modeltest.Call{ID: "call_rm", Name: "exec", Args: `{"command":"` + riskyExec + `"}`})
	})
}

func approvalHome(t *testing.T, model *modeltest.Server, approval map[string]any) *testenv.Home {
	return testenv.NewHome(t, model.URL(), map[string]any{"tools": map[string]any{"approval": approval}})
}

// sandboxedApprovalHome is the setting: exec under bwrap and approval on
// (without bwrap here, approval alone, with a warning).
func sandboxedApprovalHome(t *testing.T, model *modeltest.Server, approval map[string]any) *testenv.Home {
	if err := tools.NewSandbox(tools.SandboxLayout{}).Ready(); err != nil {
		t.Log("WARNING: bwrap cannot run here; the approval is tested without the sandbox: " + err.Error())
		return approvalHome(t, model, approval)
	}
	return testenv.NewHome(t, model.URL(), map[string]any{"tools": map[string]any{
		"approval": approval, "exec": map[string]any{"enable": true, "sandbox": "bwrap"},
	}})
}

// ownerSealed is msg as the owner's CLI sends it: sealed with the home's
// owner key (made here when the home has none yet, adopted by its processes).
func ownerSealed(t *testing.T, home *testenv.Home, msg protocol.Inbound) protocol.Inbound {
	t.Helper()
	proposed, err := owner.NewKey()
	require.NoError(t, err)
	key, err := owner.FileIn(filepath.Dir(home.ConfigPath)).Adopt(context.Background(), proposed)
	require.NoError(t, err)
	if msg.SessionKey == "" {
		msg.SessionKey = protocol.SessionKey(msg.Route.Channel, msg.Route.ChatID)
	}
	key.Seal(&msg, owner.ByOwner)
	return msg
}

// waitingRequest polls the turn's state query until it waits for a person.
func waitingRequest(t *testing.T, dev *testenv.DevServer, sessionKey string, logs func() string) protocol.ApprovalRequest {
	t.Helper()
	var req *protocol.ApprovalRequest
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		v, err := dev.Client.QueryWorkflow(ctx, protocol.TurnWorkflowID(sessionKey), "", protocol.QueryState)
		if err != nil {
			return false
		}
		var st protocol.TurnState
		if v.Get(&st) != nil || st.Waiting == nil {
			return false
		}
		req = st.Waiting
		return true
	}, time.Minute, 100*time.Millisecond, "the turn never waited for approval\n%s", logs())
	return *req
}

func ranCount(t *testing.T, home *testenv.Home) int {
	data, err := os.ReadFile(filepath.Join(home.Workspace, "ran.txt"))
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(data), "ran\n")
}

// TestApprovalWaitSurvivesKillingTheWorker: the turn waits for approval, the
// worker is SIGKILLed and a new one started; /approve then runs the command
// once, and the model sees its result.
func TestApprovalWaitSurvivesKillingTheWorker(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := approvalModel()
	defer model.Close()
	home := sandboxedApprovalHome(t, model, map[string]any{"mode": "risky"})
	env := home.Env(dev.Addr)
	first, logs := startWorker(t, env)
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model"})}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	route := protocol.Route{Channel: "cli", ChatID: "approve", SenderID: "owner"}
	_, err := bus.Publish(ctx, protocol.Inbound{ID: "m1", SessionKey: protocol.SessionKey(route.Channel, route.ChatID), Route: route, Content: "clean the build", SentAt: time.Now()})
	require.NoError(t, err)
	req := waitingRequest(t, dev, "cli:approve", logs.String)
	require.Equal(t, "exec", req.Tool)
	require.Contains(t, req.Reason, "recursive or forced rm")
	require.Equal(t, 0, ranCount(t, home), "nothing runs before the answer")
	require.Contains(t, currentDetails(t, dev, "cli:approve"), "waiting for approval: exec "+riskyExec+" (asked just now)", "the Web UI shows the wait")

	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_, _ = first.Process.Wait()
	_, logs = startWorker(t, env)
	require.Equal(t, req.ID, waitingRequest(t, dev, "cli:approve", logs.String).ID, "the new worker waits on the same request")

	_, err = bus.Publish(ctx, ownerSealed(t, home, protocol.Inbound{ID: "m2", SessionKey: protocol.SessionKey(route.Channel, route.ChatID), Route: route, Content: "/approve " + req.ID, SentAt: time.Now()}))
	require.NoError(t, err)
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:approve"), "").Get(ctx, &res), "worker log:\n%s", logs)
	require.Equal(t, protocol.StopCompleted, res.StopReason)
	require.Equal(t, 1, ranCount(t, home), "the approved command ran once")
	require.Contains(t, res.ReplyPreview, "Tool said:")
	require.NotContains(t, res.ReplyPreview, "blocked by safety guard", "approved, the deny list asked instead of refusing")
	meta, _ := sessionLines(t, home, "cli:approve")
	recs, _ := meta["metadata"].(map[string]any)["approvals"].(map[string]any)
	rec, _ := recs[req.ID].(map[string]any)
	require.Equal(t, "answered", rec["status"], "the request is closed in the session")
	testenv.RecordHistory(t, dev.Client, protocol.TurnWorkflowID("cli:approve"), "", "approval_wait_approved")
}

// TestDenialAndTimeoutReachTheModel: /deny with a reason and a request
// nobody answers both become the tool's result; nothing runs.
func TestDenialAndTimeoutReachTheModel(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := approvalModel()
	defer model.Close()
	home := approvalHome(t, model, map[string]any{"mode": "risky", "timeoutS": 2})
	_, logs := startWorker(t, home.Env(dev.Addr))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model"})}
	deny := protocol.Route{Channel: "cli", ChatID: "deny", SenderID: "owner"}
	_, err := bus.Publish(ctx, protocol.Inbound{ID: "d1", SessionKey: protocol.SessionKey(deny.Channel, deny.ChatID), Route: deny, Content: "clean the build", SentAt: time.Now()})
	require.NoError(t, err)
	req := waitingRequest(t, dev, "cli:deny", logs.String)
	_, err = bus.Publish(ctx, ownerSealed(t, home, protocol.Inbound{ID: "d2", SessionKey: protocol.SessionKey(deny.Channel, deny.ChatID), Route: deny, Content: "/deny " + req.ID + " not on a Friday", SentAt: time.Now()}))
	require.NoError(t, err)
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:deny"), "").Get(ctx, &res))
	require.Contains(t, res.ReplyPreview, "The user denied this: not on a Friday.")

	timed := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model", ApprovalTimeout: 2 * time.Second})}
	_, err = timed.Publish(ctx, protocol.Inbound{ID: "t1", SessionKey: "cli:timeout", Route: protocol.Route{Channel: "cli", ChatID: "timeout"}, Content: "clean the build", SentAt: time.Now()})
	require.NoError(t, err)
	require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:timeout"), "").Get(ctx, &res), "worker log:\n%s", logs)
	require.Contains(t, res.ReplyPreview, "Nobody approved this call within 2s, so it was not run.")
	require.Equal(t, 0, ranCount(t, home))
}

// TestRepeatedToolCallsAreStopped: a model that keeps asking for the same
// read gets guidance after three runs, and the turn ends without tools.
func TestRepeatedToolCallsAreStopped(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		if len(req.Tools) == 0 {
			return modeltest.Text("I kept going in circles; here is what I have.")
		}
		return modeltest.ToolCalls(modeltest.Call{ID: "c" + string(rune('a'+len(req.Messages))), Name: "list_dir", Args: `{"path":"."}`})
	})
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	_, logs := startWorker(t, home.Env(dev.Addr))
	bus := &channels.Bus{Client: dev.Client, Settings: testenv.Settings(protocol.Settings{Model: "test-model"})}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := bus.Publish(ctx, protocol.Inbound{ID: "r1", SessionKey: "cli:loop", Route: protocol.Route{Channel: "cli", ChatID: "loop"}, Content: "look around", SentAt: time.Now()})
	require.NoError(t, err)
	var res protocol.TurnResult
	require.NoError(t, dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:loop"), "").Get(ctx, &res), "worker log:\n%s", logs)
	require.Equal(t, protocol.StopRepeatedCalls, res.StopReason)
	require.Equal(t, "I kept going in circles; here is what I have.", res.ReplyPreview)
	reqs := model.Requests()
	require.Len(t, reqs, 6, "3 runs, 2 guided refusals, 1 answer without tools")
	last := reqs[len(reqs)-1].Messages
	guided := 0
	for _, m := range last {
		if m.Role == "tool" && strings.Contains(m.Content, "already ran 3 times in this turn") {
			guided++
		}
	}
	require.Equal(t, 2, guided)
}

// TestAPIReturnsTheRequestAndTakesApproveNext: over the OpenAI-compatible
// API, the request that needs approval is answered with the request; the
// next request, "/approve <id>", gets the turn's answer.
func TestAPIReturnsTheRequestAndTakesApproveNext(t *testing.T) {
	dev := testenv.StartDevServer(t)
	model := approvalModel()
	defer model.Close()
	s := startServeWith(t, dev, model, map[string]any{
		"api": map[string]any{"timeout": 60}, "tools": map[string]any{"approval": map[string]any{"mode": "risky"}},
	})
	client := s.client("")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	first, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Messages: apiUserMessage("clean the build")})
	require.NoError(t, err)
	asked := first.Choices[0].Message.Content
	require.Contains(t, asked, "Approval needed [")
	require.Contains(t, asked, "exec "+riskyExec)
	id := strings.TrimSuffix(strings.SplitN(strings.TrimPrefix(asked, "Approval needed ["), "]", 2)[0], "]")
	require.Equal(t, 0, ranCount(t, s.home))

	second, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Messages: apiUserMessage("/approve " + id)})
	require.NoError(t, err, "serve log:\n%s", s.logs)
	require.Contains(t, second.Choices[0].Message.Content, "Tool said:")
	require.Equal(t, 1, ranCount(t, s.home))
}

// TestSubagentAsksInItsOriginChat: a subagent's risky call is recorded in the
// chat that spawned it; /approve there wakes the subagent, which runs it once.
func TestSubagentAsksInItsOriginChat(t *testing.T) {
	dev := testenv.StartDevServer(t)
	m := &subagentModel{subStep: func(n int) modeltest.Step {
		if n == 1 {
			return modeltest.ToolCalls(modeltest.Call{ID: "sub_rm", Name: "exec", Args: `{"command":"` + riskyExec + `"}`})
		}
		return modeltest.Text("Cleaned up.")
	}}
	model := modeltest.New().Handle(m.handle)
	defer model.Close()
	home := approvalHome(t, model, map[string]any{"mode": "risky"})
	_, logs := startWorker(t, home.Env(dev.Addr))
	publishSub(t, dev, "s1", "clean up in the background")

	var id string
	require.Eventually(t, func() bool {
		recs, _ := loadSession(t, home, "cli:sub").Metadata["approvals"].(map[string]any)
		for k, v := range recs {
			if v.(map[string]any)["status"] == "pending" {
				id = k
				return strings.HasPrefix(v.(map[string]any)["workflow_id"].(string), "subagent/")
			}
		}
		return false
	}, time.Minute, 100*time.Millisecond, "the subagent's request never reached its origin session\n%s", logs)
	require.Equal(t, 0, ranCount(t, home))

	publishMessage(t, dev, ownerSealed(t, home, protocol.Inbound{ID: "s2", SessionKey: "cli:sub", Route: protocol.Route{Channel: "cli", ChatID: "sub"}, Content: "/approve " + id}))
	require.Eventually(t, func() bool { _, sub := m.counts(); return sub == 2 }, time.Minute, 100*time.Millisecond, "the subagent never went on\n%s", logs)
	require.Equal(t, 1, ranCount(t, home))
	require.Eventually(t, func() bool {
		for _, msg := range loadSession(t, home, "cli:sub").Messages {
			if strings.Contains(msg.Content, "Your helper reported back.") {
				return true
			}
		}
		return false
	}, time.Minute, 100*time.Millisecond, "the subagent's report never arrived\n%s", logs)
}

// loadSession reads a session as the workers do; a missing one is empty.
func loadSession(t *testing.T, h *testenv.Home, key string) *session.Session {
	store, err := session.NewJSONLStore(session.SessionsDir(filepath.Dir(h.ConfigPath), h.Workspace), nil)
	if err != nil {
		t.Error(err)
		return &session.Session{}
	}
	sess, err := store.Load(context.Background(), key)
	if err != nil {
		t.Error(err)
		return &session.Session{}
	}
	return sess
}

// currentDetails is what the Web UI shows of a running turn (its current details).
func currentDetails(t *testing.T, dev *testenv.DevServer, sessionKey string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := dev.Client.QueryWorkflow(ctx, protocol.TurnWorkflowID(sessionKey), "", "__temporal_workflow_metadata")
	require.NoError(t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(t, v.Get(&md))
	return md.GetCurrentDetails()
}
