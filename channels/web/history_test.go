package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
)

func TestHistoryPagesBackwardsWithoutSplittingAMessage(t *testing.T) {
	c, _, base := startChannel(t, "")
	var msgs []chat.Message
	for i := range 50 {
		turn := fmt.Sprintf("r%d", i)
		msgs = append(msgs, chat.Message{Role: chat.RoleUser, Content: fmt.Sprintf("question %d", i), Turn: turn, EntryID: "u"})
		a := chat.Message{Role: chat.RoleAssistant, Content: fmt.Sprintf("answer **%d**", i), Turn: turn, EntryID: "a"}
		if i%10 == 0 { // a message drawn as two lines: a tool hint and its text
			a.ToolCalls = []chat.ToolCall{{ID: "k" + turn, Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: `{"path":"a.md"}`}}}
		}
		msgs = append(msgs, a)
	}
	_, err := c.store.Append(context.Background(), "web:long", msgs...)
	require.NoError(t, err)
	type line struct {
		Role, Text, HTML string
		Index            int
	}
	get := func(query string) (lines []line, more bool) {
		t.Helper()
		a := call(t, http.MethodGet, base+"/api/history?chat=long"+query, "")
		require.Equal(t, http.StatusOK, a.status, a.body)
		var h struct {
			Messages []line
			More     bool
		}
		require.NoError(t, json.Unmarshal([]byte(a.body), &h))
		return h.Messages, h.More
	}
	all, more := get("")
	require.Len(t, all, 105, "no limit: everything, as before")
	require.False(t, more)

	last, more := get("&limit=20")
	require.True(t, more)
	require.Len(t, last, 20)
	require.Equal(t, "answer **49**", last[19].Text)
	require.Equal(t, "<p>answer <strong>49</strong></p>", last[19].HTML, "the page's answers come rendered")

	// Walk back to the start: every line once, in order, a message's lines never split.
	var walked []line
	for before, pages := 0, 0; ; pages++ {
		q := "&limit=7"
		if before > 0 {
			q += fmt.Sprintf("&before=%d", before)
		}
		p, more := get(q)
		require.NotEmpty(t, p)
		require.LessOrEqual(t, len(p), 8, "at most one message's extra line over the limit")
		walked = append(p, walked...)
		before = p[0].Index
		if !more {
			break
		}
		require.Less(t, pages, 30)
	}
	require.Equal(t, all, walked)

	for _, bad := range []string{"&limit=0", "&limit=abc", "&before=-1", "&limit=1001"} {
		require.Equal(t, http.StatusBadRequest, call(t, http.MethodGet, base+"/api/history?chat=long"+bad, "").status, bad)
	}
}
