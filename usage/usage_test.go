package usage

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/protocol"
)

func TestRetriedCallCountsOnceAndGroups(t *testing.T) {
	s := Open(filepath.Join(t.TempDir(), "u", "usage.jsonl"))
	day1 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	day2 := day1.Add(24 * time.Hour)
	require.NoError(t, s.Add(Record{Time: day1, Session: "cli:a", Turn: "t1", Call: "llm-1", Model: "m1", Prompt: 10, Completion: 2}))
	require.NoError(t, s.Add(Record{Time: day1, Session: "cli:a", Turn: "t1", Call: "llm-1", Model: "m1", Prompt: 10, Completion: 2})) // a retry
	require.NoError(t, s.Add(Record{Time: day1, Session: "cli:a", Turn: "t1", Call: "llm-2", Model: "m1", Prompt: 20, Completion: 3, Cached: 8}))
	require.NoError(t, s.Add(Record{Time: day2, Session: "cli:b", Turn: "t2", Call: "llm-1", Model: "m2", Prompt: 5, Completion: 1, Estimated: true}))
	f, err := os.OpenFile(s.Path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, _ = f.WriteString("{torn line\n")
	require.NoError(t, f.Close())

	recs, bad, err := s.Since(time.Time{})
	require.NoError(t, err)
	require.Equal(t, 1, bad)
	require.Len(t, recs, 3)
	rep := Summarize(recs, time.Time{}, time.UTC)
	require.Equal(t, Totals{Calls: 3, Turns: 2, Prompt: 35, Completion: 6, Cached: 8, Estimated: 1}, rep.Total)
	require.Equal(t, []Row{
		{Day: "2026-03-01", Model: "m1", Totals: Totals{Calls: 2, Turns: 1, Prompt: 30, Completion: 5, Cached: 8}},
		{Day: "2026-03-02", Model: "m2", Totals: Totals{Calls: 1, Turns: 1, Prompt: 5, Completion: 1, Estimated: 1}},
	}, rep.ByDay)
	require.Equal(t, "cli:a", rep.Sessions[0].Session)
	require.Equal(t, 30, ForTurn(recs, "cli:a", "t1").Prompt)

	recent, _, err := s.Since(day2)
	require.NoError(t, err)
	require.Len(t, recent, 1)
}

func TestMissingFileIsEmpty(t *testing.T) {
	recs, bad, err := Open(filepath.Join(t.TempDir(), "none.jsonl")).Since(time.Time{})
	require.NoError(t, err)
	require.Zero(t, bad)
	require.Empty(t, recs)
}

// TestKindsGroupAndConsolidationIsNoTurn: consolidation and Dream calls are
// counted in the totals and by kind; a consolidation round adds no turn.
func TestKindsGroupAndConsolidationIsNoTurn(t *testing.T) {
	day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	recs := []Record{
		{Time: day, Session: "cli:a", Turn: "t1", Call: "llm-1", Model: "m1", Prompt: 10, Completion: 2},
		{Time: day, Session: "cli:a", Turn: "t1", Call: "consolidate/pressure/1", Model: "m1", Prompt: 30, Completion: 4, Kind: KindConsolidate},
		{Time: day, Session: "cli:a", Turn: "idle-run", Call: "consolidate/idle/1", Model: "m1", Prompt: 20, Completion: 3, Kind: KindConsolidate},
		{Time: day, Session: "dream:x", Turn: "t9", Call: "llm-1", Model: "m2", Prompt: 7, Completion: 1, Kind: TurnKind(protocol.DreamTurn)},
	}
	rep := Summarize(recs, time.Time{}, time.UTC)
	require.Equal(t, Totals{Calls: 4, Turns: 2, Prompt: 67, Completion: 10}, rep.Total)
	require.Equal(t, []Row{
		{Kind: "turn", Model: "m1", Totals: Totals{Calls: 1, Turns: 1, Prompt: 10, Completion: 2}},
		{Kind: "dream", Model: "m2", Totals: Totals{Calls: 1, Turns: 1, Prompt: 7, Completion: 1}},
		{Kind: "consolidate", Model: "m1", Totals: Totals{Calls: 2, Prompt: 50, Completion: 7}},
	}, rep.ByKind)
	require.Equal(t, Totals{Calls: 1, Prompt: 20, Completion: 3}, ForTurn(recs, "cli:a", "idle-run"))
	require.Equal(t, Totals{Calls: 2, Turns: 1, Prompt: 40, Completion: 6}, ForTurn(recs, "cli:a", "t1"))
}
