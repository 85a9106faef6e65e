package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/usage"
)

// claudePeerHome is a home whose model is anthropic/claude-sonnet-4-5 on the
// wire-level Anthropic peer; promptCaching nil leaves the default (on).
func claudePeerHome(t *testing.T, srv *modeltest.Anthropic, promptCaching *bool) *testenv.Home {
	t.Helper()
	home := testenv.NewHome(t, "", nil)
	anthropic := map[string]any{"apiKey": "sk-ant-peer", "apiBase": srv.URL()}
	if promptCaching != nil {
		anthropic["promptCaching"] = *promptCaching
	}
	writeJSON(t, home.ConfigPath, map[string]any{
		"agents": map[string]any{"defaults": map[string]any{
			"workspace": home.Workspace, "model": "anthropic/claude-sonnet-4-5", "provider": "auto", "maxTokens": 1024,
		}},
		"providers": map[string]any{"anthropic": anthropic},
	})
	require.NoError(t, os.MkdirAll(filepath.Join(home.Workspace, "notes"), 0o755))
	for n := 1; n <= 20; n++ {
		note := fmt.Sprintf("Note %d. %s\n", n, strings.Repeat(fmt.Sprintf("Line of note %d about the garden and the week ahead. ", n), 8))
		require.NoError(t, os.WriteFile(filepath.Join(home.Workspace, "notes", fmt.Sprintf("%d.txt", n)), []byte(note), 0o644))
	}
	return home
}

var readNote = regexp.MustCompile(`read note (\d+)`)

// noteModel plays the conversation: a greeting is answered in text, "read
// note N" with a read_file call and then, given its result, a short answer.
func noteModel(req *modeltest.AnthropicRequest) modeltest.Step {
	m := readNote.FindStringSubmatch(req.LastUserText())
	if m == nil {
		return modeltest.Text("Hello! Ask me to read a note.")
	}
	if req.EndsWithToolResult() {
		return modeltest.Text("Note " + m[1] + " is read.")
	}
	return modeltest.ToolCalls(modeltest.Call{ID: "toolu_note_" + m[1], Name: "read_file", Args: `{"path":"notes/` + m[1] + `.txt"}`})
}

// usageRecords reads the home's usage file, in the order calls were made.
func usageRecords(t *testing.T, home *testenv.Home) []usage.Record {
	t.Helper()
	f, err := os.Open(usage.Path(filepath.Dir(home.ConfigPath)))
	require.NoError(t, err)
	defer f.Close()
	var recs []usage.Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec usage.Record
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec))
		recs = append(recs, rec)
	}
	require.NoError(t, sc.Err())
	return recs
}

// byTurn groups records by turn, turns in the order they first appear.
func byTurn(recs []usage.Record) [][]usage.Record {
	var out [][]usage.Record
	index := map[string]int{}
	for _, r := range recs {
		i, ok := index[r.Turn]
		if !ok {
			i = len(out)
			index[r.Turn] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	return out
}

// TestAgentClaudeToolConversationHitsTheCache is issue 24's "done when"
// against the wire-level peer, which bills caching as Anthropic does (aimock
// reports no cache reads): `nanobot agent` holds a four-turn conversation,
// three turns with a tool call, and the usage records show no cache read on
// turn 1 and cache reads on every call from turn 2 on, growing with the
// history breakpoint; the records are the peer's figures.
func TestAgentClaudeToolConversationHitsTheCache(t *testing.T) {
	srv := modeltest.NewAnthropic().Handle(noteModel)
	t.Cleanup(srv.Close)
	dev := testenv.StartDevServer(t)
	home := claudePeerHome(t, srv, nil)

	out, errOut, code := runNanobot(t, home.Env(dev.Addr), "agent", "-m", "hello", "-s", "cli:notes")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	require.Equal(t, "Hello! Ask me to read a note.\n", out)
	for n := 1; n <= 3; n++ {
		out, errOut, code := runNanobot(t, home.Env(dev.Addr), "agent", "-m", fmt.Sprintf("read note %d", n), "-s", "cli:notes")
		require.Equal(t, 0, code, "stderr: %s", errOut)
		require.Equal(t, fmt.Sprintf("↳ read_file notes/%d.txt\nNote %d is read.\n", n, n), out)
	}

	recs := usageRecords(t, home)
	reqs := srv.Requests()
	require.Len(t, reqs, 7, "one call for the greeting, two for each tool turn")
	require.Len(t, recs, len(reqs))
	for i, r := range recs {
		require.Equal(t, "anthropic", r.Provider)
		require.False(t, r.Estimated)
		billed := reqs[i].Usage
		require.Equal(t, billed.Total(), r.Prompt, "call %d: prompt tokens are the peer's", i)
		require.Equal(t, billed.CacheRead, r.Cached, "call %d", i)
		require.Equal(t, billed.CacheWrite, r.CacheWrite, "call %d", i)
	}
	turns := byTurn(recs)
	require.Len(t, turns, 4)
	first := turns[0][0]
	require.Len(t, turns[0], 1)
	require.Zero(t, first.Cached, "turn 1 finds nothing cached")
	require.Positive(t, first.CacheWrite, "turn 1 writes the tools and the system prompt")
	for ti, turn := range turns[1:] {
		require.Len(t, turn, 2, "turn %d", ti+2)
		for ci, r := range turn {
			require.GreaterOrEqual(t, r.Cached, first.CacheWrite, "turn %d call %d reads at least the tools and the system prompt", ti+2, ci+1)
		}
	}
	last := turns[len(turns)-1]
	require.Greater(t, last[1].Cached, first.CacheWrite, "the history breakpoint is read too, not only the system prompt")
}
