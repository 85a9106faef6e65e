package memory

import (
	"fmt"
	"strings"
	"testing"

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
