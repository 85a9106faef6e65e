package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/protobuf/proto"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/workers"
)

// benchPlan is what the scripted model does in one turn, read from the
// user's message: "bench rounds=2,2,3 read=1 delay=100" means three rounds
// of tool calls (2, 2 and 3 list_dir calls; the first reads big.txt
// instead when read=1), then an answer; every reply after delay ms.
type benchPlan struct {
	rounds []int
	read   bool
	delay  time.Duration
}

func benchMessage(rounds []int, read bool, delayMS int) string {
	parts := make([]string, len(rounds))
	for i, n := range rounds {
		parts[i] = strconv.Itoa(n)
	}
	r := 0
	if read {
		r = 1
	}
	return fmt.Sprintf("bench rounds=%s read=%d delay=%d", strings.Join(parts, ","), r, delayMS)
}

func parsePlan(text string) benchPlan {
	var p benchPlan
	for _, f := range strings.Fields(text) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "rounds":
			for _, n := range strings.Split(v, ",") {
				if x, err := strconv.Atoi(n); err == nil {
					p.rounds = append(p.rounds, x)
				}
			}
		case "read":
			p.read = v == "1"
		case "delay":
			ms, _ := strconv.Atoi(v)
			p.delay = time.Duration(ms) * time.Millisecond
		}
	}
	return p
}

var benchCallSeq struct {
	sync.Mutex
	n int
}

// benchModel answers by the plan in the turn's last user message.
func benchModel(req *modeltest.RecordedRequest) modeltest.Step {
	last, round := -1, 0
	for i, m := range req.Messages {
		if m.Role == chat.RoleUser && strings.HasPrefix(m.Content, "bench ") {
			last, round = i, 0
		}
		if last >= 0 && i > last && m.Role == chat.RoleAssistant && len(m.ToolCalls) > 0 {
			round++
		}
	}
	if last < 0 {
		return modeltest.Text("ok")
	}
	p := parsePlan(req.Messages[last].Content)
	if round >= len(p.rounds) || len(req.Tools) == 0 {
		return modeltest.Text("done").Delay(p.delay)
	}
	calls := make([]modeltest.Call, p.rounds[round])
	benchCallSeq.Lock()
	for i := range calls {
		benchCallSeq.n++
		calls[i] = modeltest.Call{ID: fmt.Sprintf("b%d", benchCallSeq.n), Name: "list_dir", Args: `{"path":"."}`}
	}
	benchCallSeq.Unlock()
	if round == 0 && p.read {
		calls[0] = modeltest.Call{ID: calls[0].ID, Name: "read_file", Args: `{"path":"big.txt"}`}
	}
	return modeltest.ToolCalls(calls...).Delay(p.delay)
}

// benchEnv is one run of the table: a dev server, the scripted model, a
// home, the gateway (durable side) and the activities (baseline side).
type benchEnv struct {
	t     *testing.T
	dev   *testenv.DevServer // as `make run` starts it: a SQLite file database
	mem   *testenv.DevServer // in memory, started when first asked for (memDev)
	model *modeltest.Server
	home  *testenv.Home
	deps  activities.Deps
	acts  *activities.Set
	set   protocol.Settings
	seq   int
	mu    sync.Mutex
	// activityTimes are the in-process baseline's time per activity, by name, since the last reset.
	activityTimes map[string][]time.Duration
}

// baselineActivities name the in-process turn's activities in the order it calls them.
var baselineActivities = []string{"RESTORE", "COMPACT", "COMMAND", "BUILD", "model call", "SAVE"}

// timeActivity records one in-process activity's duration under name.
func (b *benchEnv) timeActivity(name string, since time.Time) {
	d := time.Since(since)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.activityTimes == nil {
		b.activityTimes = map[string][]time.Duration{}
	}
	b.activityTimes[name] = append(b.activityTimes[name], d)
}

// takeActivityTimes returns the recorded times and starts over.
func (b *benchEnv) takeActivityTimes() map[string][]time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.activityTimes
	b.activityTimes = nil
	return out
}

func (b *benchEnv) id(prefix string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	return fmt.Sprintf("%s%d", prefix, b.seq)
}

// durable sends one message and waits for the turn (through continue-as-new).
func (b *benchEnv) durable(ctx context.Context, chatID, text string, settings protocol.Settings) (time.Duration, client.WorkflowRun, error) {
	key := protocol.SessionKey("cli", chatID)
	msg := protocol.Inbound{ID: b.id("m"), Route: protocol.Route{Channel: "cli", ChatID: chatID}, Content: text, SentAt: time.Now(), SessionKey: key}
	opts := client.StartWorkflowOptions{
		ID: protocol.TurnWorkflowID(key), TaskQueue: protocol.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			protocol.SessionKeyAttribute.ValueSet(key), protocol.ChannelAttribute.ValueSet("cli")),
	}
	start := time.Now()
	run, err := b.dev.Client.SignalWithStartWorkflow(ctx, opts.ID, protocol.SignalInbound, msg, opts, protocol.TurnWorkflowName,
		protocol.TurnInput{SessionKey: key, Settings: settings})
	if err != nil {
		return 0, nil, err
	}
	var res protocol.TurnResult
	err = run.Get(ctx, &res)
	return time.Since(start), run, err
}

// baseline runs the same turn by calling the same activities in the order
// the workflow does, in this process, without Temporal.
func (b *benchEnv) baseline(chatID, text string, settings protocol.Settings) (time.Duration, error) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	a := b.acts
	for _, fn := range []any{a.Turn.Restore, a.Turn.Compact, a.Commands.Command, a.Turn.Build, a.Model.LLMCall, a.Tools.ToolCall, a.Turn.Save} {
		env.RegisterActivity(fn)
	}
	key := protocol.SessionKey("cli", chatID)
	step := protocol.StepInput{
		SessionKey: key, Turn: b.id("base-turn-"), Settings: settings,
		Message: protocol.Inbound{ID: b.id("m"), Route: protocol.Route{Channel: "cli", ChatID: chatID}, Content: text, SentAt: time.Now(), SessionKey: key},
	}
	start := time.Now()
	for i, fn := range []any{a.Turn.Restore, a.Turn.Compact, a.Commands.Command, a.Turn.Build} {
		at := time.Now()
		if _, err := env.ExecuteActivity(fn, step); err != nil {
			return 0, err
		}
		b.timeActivity(baselineActivities[i], at)
	}
	var last protocol.LLMCallResult
	var prompt, completion int
	for it := 1; it <= settings.MaxIterations; it++ {
		at := time.Now()
		v, err := env.ExecuteActivity(a.Model.LLMCall, protocol.LLMCallInput{SessionKey: key, Turn: step.Turn, Iteration: it, Call: it, Settings: settings, Route: step.Message.Route})
		if err != nil {
			return 0, err
		}
		b.timeActivity(baselineActivities[4], at)
		last = protocol.LLMCallResult{}
		if err := v.Get(&last); err != nil {
			return 0, err
		}
		prompt, completion = prompt+last.PromptTokens, completion+last.CompletionTokens
		if len(last.ToolCalls) == 0 {
			break
		}
		var wg sync.WaitGroup
		errs := make([]error, len(last.ToolCalls))
		for i, c := range last.ToolCalls {
			in := protocol.ToolCallInput{SessionKey: key, Turn: step.Turn, Iteration: it, CallID: c.ID, Name: c.Name,
				LLMEntry: last.EntryID, Route: step.Message.Route}
			wg.Add(1)
			go func() { // concurrency-safe calls run together, as the workflow runs them
				defer wg.Done()
				tenv := s.NewTestActivityEnvironment()
				tenv.RegisterActivity(a.Tools.ToolCall)
				_, errs[i] = tenv.ExecuteActivity(a.Tools.ToolCall, in)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return 0, err
			}
		}
	}
	save := protocol.SaveInput{StepInput: step, StopReason: protocol.StopCompleted, FinalEntry: last.EntryID, PromptTokens: prompt, CompletionTokens: completion}
	at := time.Now()
	if _, err := env.ExecuteActivity(a.Turn.Save, save); err != nil {
		return 0, err
	}
	b.timeActivity(baselineActivities[5], at)
	return time.Since(start), nil
}

func historyBytes(t *testing.T, c client.Client, wid, rid string) int {
	total := 0
	for _, ev := range testenv.History(t, c, wid, rid).Events {
		total += proto.Size(ev)
	}
	return total
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	for i := range s { // insertion sort: the samples are few
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func rssKB(pid int) int { return procStatusKB(pid, "VmRSS:") }

// anonKB is the part of pid's RSS that is its own memory (heap, stacks), not pages of its binary.
func anonKB(pid int) int { return procStatusKB(pid, "RssAnon:") }

// procStatusKB reads one kB field of /proc/<pid>/status (0 when it cannot).
func procStatusKB(pid int, field string) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, field) {
			f := strings.Fields(line)
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func newBenchEnv(t *testing.T) *benchEnv {
	b := &benchEnv{t: t, dev: testenv.StartRunDevServer(t), model: modeltest.New().Handle(benchModel)}
	t.Cleanup(b.model.Close)
	b.home = testenv.NewHome(t, b.model.URL(), nil)
	require.NoError(t, os.WriteFile(filepath.Join(b.home.Workspace, "big.txt"), []byte(strings.Repeat("forty kilobytes of context.\n", 1463)), 0o644))
	cfg, _, err := config.Load(b.home.ConfigPath)
	require.NoError(t, err)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.deps, _, err = workers.NewActivities(cfg, nil, channels.NewManager(), channels.NewStreamHub(), quiet)
	b.acts = activities.New(b.deps)
	require.NoError(t, err)
	b.set = testenv.Settings(protocol.Settings{Model: "test-model", Stream: false})
	return b
}

// memDev is a temporal-dev on an in-memory database, for the rows that explain by comparison.
func (b *benchEnv) memDev() *testenv.DevServer {
	if b.mem == nil {
		b.mem = testenv.StartDevServer(b.t)
	}
	return b.mem
}
