package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
)

func TestAppendNumbersAndCaps(t *testing.T) {
	ws := t.TempDir()
	for i := 0; i < MaxHistoryEntries+5; i++ {
		e, err := Append(ws, Entry{Content: fmt.Sprintf("entry %d", i)})
		require.NoError(t, err)
		require.Equal(t, i+1, e.Cursor)
	}
	entries, err := Read(ws)
	require.NoError(t, err)
	require.Len(t, entries, MaxHistoryEntries)
	require.Equal(t, 6, entries[0].Cursor, "the oldest entries go")
	require.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d$`, entries[0].Timestamp)
}

func TestRawArchive(t *testing.T) {
	msgs := []chat.Message{
		{Role: chat.RoleUser, Content: "hello"},
		{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{Function: chat.FunctionCall{Name: "read_file"}}}},
		{Role: chat.RoleAssistant, Content: strings.Repeat("x", 20000)},
	}
	got := RawArchive(msgs)
	require.True(t, strings.HasPrefix(got, "[RAW] 3 messages\nUSER: hello\nASSISTANT: (called read_file)\nASSISTANT: xxx"))
	require.Len(t, got, MaxRawArchive)
}

func TestAppendWithIDIsIdempotent(t *testing.T) {
	ws := t.TempDir()
	first, err := Append(ws, Entry{Content: "summary one", ID: "turn-1/round-1"})
	require.NoError(t, err)
	again, err := Append(ws, Entry{Content: "a different retry summary", ID: "turn-1/round-1"})
	require.NoError(t, err)
	require.Equal(t, first, again, "the retry gets the stored entry")
	entries, err := Read(ws)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	e, ok, err := Find(ws, "turn-1/round-1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "summary one", e.Content)
}

func TestCursorMovesOnlyFromWhereItWas(t *testing.T) {
	ws := t.TempDir()
	for i := 0; i < 5; i++ {
		_, err := Append(ws, Entry{Content: fmt.Sprint(i)})
		require.NoError(t, err)
	}
	cur, entries, err := Unprocessed(context.Background(), Files{Workspace: ws}, 3)
	require.NoError(t, err)
	require.Zero(t, cur)
	require.Equal(t, []int{1, 2, 3}, cursors(entries))
	ok, err := AdvanceCursor(ws, 0, 3)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = AdvanceCursor(ws, 0, 3)
	require.NoError(t, err)
	require.True(t, ok, "a retried move is fine")
	ok, err = AdvanceCursor(ws, 0, 5)
	require.NoError(t, err)
	require.False(t, ok, "another Dream moved it meanwhile")
	_, entries, err = Unprocessed(context.Background(), Files{Workspace: ws}, 20)
	require.NoError(t, err)
	require.Equal(t, []int{4, 5}, cursors(entries))
}

func cursors(es []Entry) []int {
	var out []int
	for _, e := range es {
		out = append(out, e.Cursor)
	}
	return out
}

// TestHistorySurvivesAKilledWriter kills a process (SIGKILL) while it
// appends as fast as it can: the file is always whole, and appends go on
// from the last cursor.
func TestHistorySurvivesAKilledWriter(t *testing.T) {
	if ws := os.Getenv("NANOBOT_MEMORY_WRITER"); ws != "" {
		for i := 0; ; i++ {
			if _, err := Append(ws, Entry{Content: strings.Repeat("写入", 500) + fmt.Sprint(i)}); err != nil {
				panic(err)
			}
		}
	}
	ws := t.TempDir()
	for round := 0; round < 5; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHistorySurvivesAKilledWriter$")
		cmd.Env = append(os.Environ(), "NANOBOT_MEMORY_WRITER="+ws)
		require.NoError(t, cmd.Start())
		before := 0
		if es, _ := Read(ws); len(es) > 0 {
			before = es[len(es)-1].Cursor
		}
		seen := 0
		require.Eventually(t, func() bool {
			es, _ := Read(ws)
			if len(es) > 0 {
				seen = es[len(es)-1].Cursor
			}
			return seen >= before+20
		}, 30*time.Second, time.Millisecond)
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()

		data, err := os.ReadFile(HistoryPath(ws))
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		for i, line := range lines {
			var e Entry
			require.NoError(t, json.Unmarshal([]byte(line), &e), "line %d is whole", i+1)
			require.Equal(t, i+1, e.Cursor, "cursors have no gaps or repeats")
		}
		require.GreaterOrEqual(t, len(lines), seen, "nothing already written is lost")
		next, err := Append(ws, Entry{Content: "after the kill"})
		require.NoError(t, err)
		require.Equal(t, len(lines)+1, next.Cursor)
	}
}
