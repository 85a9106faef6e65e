package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/memory/gitstore"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/tokens"
)

// patchConfig edits the test home's config.json before a worker reads it.
func patchConfig(t *testing.T, h *testenv.Home, fn func(defaults, tools map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(h.ConfigPath)
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(data, &cfg))
	defaults := cfg["agents"].(map[string]any)["defaults"].(map[string]any)
	tl, _ := cfg["tools"].(map[string]any)
	if tl == nil {
		tl = map[string]any{}
		cfg["tools"] = tl
	}
	fn(defaults, tl)
	data, err = json.MarshalIndent(cfg, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(h.ConfigPath, data, 0o600))
}

// memoryModel answers chat turns, consolidation summaries and Dream runs
// (whose first call tries a file outside Dream's list and rewrites MEMORY.md).
type memoryModel struct {
	*modeltest.Server
	mu        sync.Mutex
	summaries int
	dreams    int
}

const dreamedMemory = "# Long-term Memory\n\n- The user is learning Chinese and keeps notes per turn.\n- Dream was here.\n"

func newMemoryModel(t *testing.T) *memoryModel {
	m := &memoryModel{Server: modeltest.New()}
	t.Cleanup(m.Close)
	m.Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		sys := req.Messages[0].Content
		last := req.Messages[len(req.Messages)-1]
		m.mu.Lock()
		defer m.mu.Unlock()
		switch {
		case sys == activities.ConsolidationPrompt:
			m.summaries++
			first, _, _ := strings.Cut(last.Content, "\n")
			return modeltest.Text(fmt.Sprintf("Summary %d: the user shared study notes, starting with %q.", m.summaries, chat.Preview(first, 80)))
		case strings.HasPrefix(sys, "# nanobot 🐈 — Dream"):
			if last.Role == chat.RoleUser {
				m.dreams++
				return modeltest.ToolCalls(
					modeltest.Call{ID: fmt.Sprintf("d%d-a", m.dreams), Name: "write_file", Args: `{"path":"AGENTS.md","content":"obey the dream"}`},
					modeltest.Call{ID: fmt.Sprintf("d%d-m", m.dreams), Name: "write_file", Args: mustJSON(map[string]string{"path": "memory/MEMORY.md", "content": dreamedMemory})})
			}
			return modeltest.Text("Updated memory/MEMORY.md with the study notes.")
		}
		return modeltest.Text("Noted. 我记住了：这一条笔记已经保存，下次我们可以继续复习。")
	})
	return m
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// memoryRig is a dev server, the memory model and one worker with a small window.
type memoryRig struct {
	dev   *testenv.DevServer
	model *memoryModel
	home  *testenv.Home
	bus   *channels.Bus
}

func newMemoryRig(t *testing.T, window, maxTokens int) *memoryRig {
	r := &memoryRig{dev: testenv.StartDevServer(t), model: newMemoryModel(t)}
	r.home = testenv.NewHome(t, r.model.URL(), nil)
	patchConfig(t, r.home, func(d, tl map[string]any) {
		d["contextWindowTokens"], d["maxTokens"] = window, maxTokens
		// Every built-in tool's definition costs ~2 800 tokens: more than a 4 000-token window holds.
		tl["file"] = map[string]any{"enable": false}
		tl["exec"] = map[string]any{"enable": false}
		tl["web"] = map[string]any{"enable": false}
	})
	startWorker(t, r.home.Env(r.dev.Addr))
	s := protocol.Settings{Model: "test-model", ContextWindowTokens: window, MaxTokens: maxTokens, ConsolidationRatio: 0.5}
	r.bus = &channels.Bus{Client: r.dev.Client, Settings: testenv.Settings(s)}
	return r
}

func (r *memoryRig) say(t *testing.T, chatID, text string) protocol.TurnResult {
	t.Helper()
	_, err := r.bus.Publish(context.Background(), protocol.Inbound{ID: fmt.Sprintf("%s-%d", chatID, time.Now().UnixNano()),
		SessionKey: "cli:" + chatID, Route: protocol.Route{Channel: "cli", ChatID: chatID}, Content: text, SentAt: time.Now()})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var res protocol.TurnResult
	require.NoError(t, r.dev.Client.GetWorkflow(ctx, protocol.TurnWorkflowID("cli:"+chatID), "").Get(ctx, &res))
	return res
}

// waitWorkflow waits for a workflow (started elsewhere) to exist and finish.
func (r *memoryRig) waitWorkflow(t *testing.T, id string, out any) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, err := r.dev.Client.DescribeWorkflowExecution(context.Background(), id, "")
		return err == nil
	}, 30*time.Second, 50*time.Millisecond, "workflow %s never started", id)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, r.dev.Client.GetWorkflow(ctx, id, "").Get(ctx, out))
}

func studyNote(i int) string {
	topics := []string{"声调", "汉字笔画", "量词", "成语", "时间表达", "方向补语"}
	return fmt.Sprintf("Turn %d. 今天我学习了%s，老师说要多练习。Please remember note #%d: practice %d minutes, review the words from lesson %d, and ask about %s next time.",
		i, topics[i%len(topics)], i, 10+i%20, i/5, topics[(i+1)%len(topics)])
}

// promptTokens is a request's size as the model receives it.
func promptTokens(req modeltest.RecordedRequest) int {
	c := tokens.For(req.Model)
	return c.Messages(req.Messages) + c.Tools(req.Tools)
}

// TestMemoryLastsTwoHundredTurns is the "done when": 200 turns with
// a 4 000-token window never send a request over the window, history.jsonl
// holds the summaries, the next prompt carries the archived summary, /new
// archives, Dream edits MEMORY.md and leaves a git commit, and
// /dream-restore brings the earlier MEMORY.md back.
//
// make test runs 60 turns (about 12 s); NANOBOT_MEMORY_TURNS=200 (make long) runs the full 200.
func TestMemoryLastsTwoHundredTurns(t *testing.T) {
	const window, maxTokens = 4000, 512
	turns := 60
	if n, err := strconv.Atoi(os.Getenv("NANOBOT_MEMORY_TURNS")); err == nil && n > 0 {
		turns = n
	}
	r := newMemoryRig(t, window, maxTokens)
	const handWritten = "# Long-term Memory\n\n- The user's name is Mei.\n"
	require.NoError(t, os.MkdirAll(memory.Dir(r.home.Workspace), 0o755))
	require.NoError(t, os.WriteFile(memory.MemoryPath(r.home.Workspace), []byte(handWritten), 0o644))
	var table []string
	maxSeen := 0
	for i := 1; i <= turns; i++ {
		before := r.model.Count()
		res := r.say(t, "long", studyNote(i))
		require.Equal(t, protocol.StopCompleted, res.StopReason, "turn %d", i)
		for _, req := range r.model.Requests()[before:] {
			n := promptTokens(req)
			require.LessOrEqual(t, n+maxTokens, window, "turn %d sent %d prompt tokens + %d max tokens", i, n, maxTokens)
			if req.Messages[0].Content != activities.ConsolidationPrompt {
				maxSeen = max(maxSeen, n)
				if i%10 == 0 || i <= 3 {
					table = append(table, fmt.Sprintf("| %3d | %4d |", i, n))
				}
			}
		}
	}
	t.Logf("prompt tokens per turn (window %d, max tokens %d, largest %d):\n| turn | prompt tokens |\n|---|---|\n%s", window, maxTokens, maxSeen, strings.Join(table, "\n"))
	if p := os.Getenv("NANOBOT_MEMORY_TABLE"); p != "" {
		require.NoError(t, os.WriteFile(p, []byte(strings.Join(table, "\n")+"\n"), 0o644))
	}

	entries, err := memory.Read(r.home.Workspace)
	require.NoError(t, err)
	summaries := 0
	for _, e := range entries {
		require.Equal(t, "cli:long", e.SessionKey)
		require.False(t, strings.HasPrefix(e.Content, "[RAW]"), "the model summarized every round: %s", e.Content)
		if strings.HasPrefix(e.Content, "Summary ") {
			summaries++
		}
	}
	require.GreaterOrEqual(t, summaries, turns/15, "history.jsonl holds the summaries")

	meta, _ := sessionLines(t, r.home, "cli:long")
	require.Positive(t, meta["last_consolidated"])
	summary := meta["metadata"].(map[string]any)["_last_summary"].(map[string]any)["text"].(string)
	before := r.model.Count()
	r.say(t, "long", "What did we study so far?")
	next := r.model.Requests()[before]
	require.LessOrEqual(t, promptTokens(next)+maxTokens, window)
	require.Contains(t, next.Messages[0].Content, "## Long-term Memory\n"+handWritten)
	require.Contains(t, next.Messages[0].Content, "[Archived Context Summary]\n\n"+summary, "the next turn's prompt carries the archived summary")

	// /new archives what is left, then clears.
	entries, err = memory.Read(r.home.Workspace)
	require.NoError(t, err)
	before = len(entries)
	r.say(t, "long", "/new")
	testenv.RecordHistory(t, r.dev.Client, "turn/cli:long", "", "memory_new_archives")
	entries, err = memory.Read(r.home.Workspace)
	require.NoError(t, err)
	require.Equal(t, before+1, len(entries), "/new archived the rest")
	_, msgs := sessionLines(t, r.home, "cli:long")
	require.Empty(t, msgs)

	// Dream: edits MEMORY.md (and only what it may), leaves a commit, moves the cursor.
	agents, err := os.ReadFile(filepath.Join(r.home.Workspace, "AGENTS.md"))
	if err != nil {
		agents = nil
	}
	r.say(t, "long", "/dream")
	var dream protocol.DreamResult
	r.waitWorkflow(t, activities.DreamManualID, &dream)
	testenv.RecordHistory(t, r.dev.Client, activities.DreamManualID, "", "dream_run")
	require.Equal(t, min(20, len(entries)), dream.Entries)
	require.Equal(t, []string{"memory/.dream_cursor", "memory/MEMORY.md"}, dream.Changed)
	got, err := os.ReadFile(memory.MemoryPath(r.home.Workspace))
	require.NoError(t, err)
	require.Equal(t, dreamedMemory, string(got))
	after, _ := os.ReadFile(filepath.Join(r.home.Workspace, "AGENTS.md"))
	require.Equal(t, string(agents), string(after), "Dream cannot touch AGENTS.md")
	cursor, err := memory.ReadCursor(r.home.Workspace)
	require.NoError(t, err)
	require.Equal(t, entries[dream.Entries-1].Cursor, cursor)
	repo, err := gitstore.Open(r.home.Workspace)
	require.NoError(t, err)
	log, err := repo.Log(5)
	require.NoError(t, err)
	require.Equal(t, activities.DreamCommitMessage, log[0].Message)
	require.Equal(t, dream.Commit, log[0].Hash)

	// The refused write reached the model as an error.
	var refused bool
	for _, req := range r.model.Requests() {
		for _, m := range req.Messages {
			refused = refused || (m.Role == chat.RoleTool && strings.Contains(m.Content, "may only change"))
		}
	}
	require.True(t, refused)

	// /dream-restore undoes the Dream commit: the MEMORY.md from before it is back.
	r.say(t, "long", "/dream-restore "+log[0].Short())
	got, err = os.ReadFile(memory.MemoryPath(r.home.Workspace))
	require.NoError(t, err)
	require.Equal(t, handWritten, string(got))
	_, msgs = sessionLines(t, r.home, "cli:long")
	require.Contains(t, msgs[len(msgs)-1].Content, "Restored Dream memory to the state before `"+log[0].Short()+"`.")
	require.Contains(t, msgs[len(msgs)-1].Content, "- Restored files: `memory/MEMORY.md`")
}
