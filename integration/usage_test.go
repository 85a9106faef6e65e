package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/activities"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/usage"
)

// TestUsageAddsUpAcrossTurns: three turns whose model calls report usage;
// `nanobot usage` and /status add up to what the scripted model reported,
// and a retried-or-journaled call is not counted twice.
func TestUsageAddsUpAcrossTurns(t *testing.T) {
	r := newRig(t, protocol.Settings{})
	day := time.Now().Format(time.DateOnly)
	r.turn(t, "u1", "hi", modeltest.Text("one").Usage(100, 10).Cached(40))
	r.turn(t, "u2", "list", modeltest.ToolCalls(modeltest.Call{ID: "c1", Name: "list_dir", Args: `{"path":"."}`}).Usage(200, 20),
		modeltest.Text("two").Usage(300, 30))
	r.turn(t, "u1", "again", modeltest.Text("three").Usage(50, 5))

	out, stderr, code := runNanobot(t, r.home.Env(r.dev.Addr), "usage", "--json")
	require.Equal(t, 0, code, stderr)
	var rep usage.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Equal(t, usage.Totals{Calls: 4, Turns: 3, Prompt: 650, Completion: 65, Cached: 40}, rep.Total)
	require.Len(t, rep.ByDay, 1)
	require.Equal(t, "test-model", rep.ByDay[0].Model)
	bySession := map[string]usage.Totals{}
	for _, s := range rep.Sessions {
		bySession[s.Session] = s.Totals
	}
	require.Equal(t, usage.Totals{Calls: 2, Turns: 2, Prompt: 150, Completion: 15, Cached: 40}, bySession["cli:u1"])
	require.Equal(t, usage.Totals{Calls: 2, Turns: 1, Prompt: 500, Completion: 50}, bySession["cli:u2"])

	table, stderr, code := runNanobot(t, r.home.Env(r.dev.Addr), "usage", "--days", "1")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `total\s+3\s+4\s+650\s+65\s+40`, table)
	require.Contains(t, table, "cli:u2")

	_, _, code = runNanobot(t, r.home.Env(r.dev.Addr), "usage", "--days", "-1")
	require.Equal(t, 2, code, "a negative --days is a usage error")

	res, _, _ := r.turn(t, "u1", "/status")
	if time.Now().Format(time.DateOnly) == day { // "today" is the day the turns ran
		require.Contains(t, res.ReplyPreview, "Usage today: 650 in, 65 out (40 cached), 4 call(s) in 3 turn(s)")
		require.Contains(t, res.ReplyPreview, "this session: 150 in, 15 out (40 cached), 2 call(s) in 2 turn(s)")
	}
	require.False(t, strings.Contains(res.ReplyPreview, "unavailable"), res.ReplyPreview)
}

// TestUsageCountsConsolidation: the summary call /new makes is in the usage
// file as a "consolidate" call of the model, counted in `nanobot usage`'s
// totals but not as a turn; a Dream run's call is there as "dream".
func TestUsageCountsConsolidation(t *testing.T) {
	r := newRig(t, protocol.Settings{})
	r.turn(t, "c1", "remember that I like tea", modeltest.Text("noted").Usage(100, 10))
	_, _, reqs := r.turn(t, "c1", "/new", modeltest.Text("The user likes tea.").Usage(60, 6).Cached(20))
	require.Len(t, reqs, 1, "/new asked the model for one summary")
	require.Equal(t, activities.ConsolidationPrompt, reqs[0].Messages[0].Content)

	// /dream folds the summary into memory: a turn of its own in a dream: session.
	r.model.Script(modeltest.Text("No changes.").Usage(40, 4))
	r.send(t, "c1", "/dream")
	require.Eventually(t, func() bool {
		_, err := r.dev.Client.DescribeWorkflowExecution(context.Background(), activities.DreamManualID, "")
		return err == nil
	}, time.Minute, 50*time.Millisecond, "Dream never started")
	var dream protocol.DreamResult
	require.NoError(t, r.dev.Client.GetWorkflow(context.Background(), activities.DreamManualID, "").Get(context.Background(), &dream))
	require.Equal(t, 1, dream.Entries, "Dream read the summary /new archived")

	out, stderr, code := runNanobot(t, r.home.Env(r.dev.Addr), "usage", "--json")
	require.Equal(t, 0, code, stderr)
	var rep usage.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Equal(t, usage.Totals{Calls: 3, Turns: 2, Prompt: 200, Completion: 20, Cached: 20}, rep.Total)
	require.Equal(t, []usage.Row{
		{Kind: "turn", Model: "test-model", Totals: usage.Totals{Calls: 1, Turns: 1, Prompt: 100, Completion: 10}},
		{Kind: "dream", Model: "test-model", Totals: usage.Totals{Calls: 1, Turns: 1, Prompt: 40, Completion: 4}},
		{Kind: "consolidate", Model: "test-model", Totals: usage.Totals{Calls: 1, Prompt: 60, Completion: 6, Cached: 20}},
	}, rep.ByKind)

	table, stderr, code := runNanobot(t, r.home.Env(r.dev.Addr), "usage")
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `total\s+2\s+3\s+200\s+20\s+20`, table)
	require.Regexp(t, `consolidate\s+test-model\s+1\s+60\s+6\s+20`, table)
	require.Regexp(t, `dream\s+test-model\s+1\s+40\s+4\s+0`, table)
}
