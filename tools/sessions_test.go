package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// filesBook is the session tools' book on real session files; only
// delivery, which needs Temporal, is recorded instead.
type filesBook struct {
	*session.JSONLStore
	delivered []SessionMessage
	limit     int
}

func (b *filesBook) Handles(context.Context) ([]session.Handled, error) {
	src, err := b.HandleSources()
	return session.Handles(src), err
}

func (b *filesBook) Search(_ context.Context, q, exclude string, limit int) ([]session.Match, error) {
	return b.JSONLStore.Search(q, exclude, limit)
}

func (b *filesBook) Deliver(_ context.Context, _ Env, m SessionMessage) error {
	b.delivered = append(b.delivered, m)
	return nil
}

func (b *filesBook) MaxMessagesPerMinute() int { return b.limit }

func newFilesBook(t *testing.T) *filesBook {
	st, err := session.NewJSONLStore(t.TempDir(), nil)
	require.NoError(t, err)
	return &filesBook{JSONLStore: st, limit: 6}
}

func (b *filesBook) say(t *testing.T, key string, msgs ...chat.Message) {
	t.Helper()
	_, err := b.Append(context.Background(), key, msgs...)
	require.NoError(t, err)
}

func handleOfKey(t *testing.T, b *filesBook, key string) string {
	t.Helper()
	hs, err := b.Handles(context.Background())
	require.NoError(t, err)
	h, ok := handleFor(hs, key)
	require.True(t, ok, key)
	return "@" + h.Handle
}

func msg(role, turn, text string) chat.Message {
	return chat.Message{Role: role, Content: text, Turn: turn, EntryID: role}
}

func run(t *testing.T, tool Tool, env Env, args string) Result {
	t.Helper()
	r := NewRegistry()
	r.Register(tool)
	return r.Execute(context.Background(), env, tool.Name(), args)
}

func TestListSessionsNamesTheOthersByHandle(t *testing.T) {
	b := newFilesBook(t)
	b.say(t, "telegram:1", msg("user", "t", "hi"))
	b.say(t, "slack:C1", msg("user", "t", "hello"))
	require.NoError(t, b.Update(context.Background(), "subagent:x", func(s *session.Session) error { s.Kind = "subagent"; return nil }))

	res := run(t, NewListSessions(b), Env{SessionKey: "telegram:1"}, `{}`)
	require.False(t, res.IsError, res.Text)
	var got []string
	require.NoError(t, json.Unmarshal([]byte(res.Text), &got))
	require.Equal(t, []string{handleOfKey(t, b, "slack:C1")}, got, "not the caller's own, not the agent's own sessions, never a key")
	require.NotContains(t, res.Text, "C1")

	res = run(t, NewListSessions(b), Env{}, `{}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "Error: session context is unavailable")
}

func TestSearchSessionsReturnsNanobotsShape(t *testing.T) {
	b := newFilesBook(t)
	long := strings.Repeat("filler words ", 60) + "the Lisbon itinerary" + strings.Repeat(" more", 100)
	b.say(t, "telegram:1", msg("user", "t", "Trip planning"), msg("assistant", "t", long))
	b.say(t, "cli:me", msg("user", "t", "lisbon too"))

	res := run(t, NewSearchSessions(b), Env{SessionKey: "cli:me"}, `{"query": "  LISBON "}`)
	require.False(t, res.IsError, res.Text)
	var got struct {
		Notice  string `json:"notice"`
		Query   string `json:"query"`
		Results []struct {
			SessionKey string `json:"session_key"`
			SessionRef string `json:"session_ref"`
			Title      string `json:"title"`
			Excerpts   []struct {
				MessageIndex int    `json:"message_index"`
				Role         string `json:"role"`
				Content      string `json:"content"`
			}
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Text), &got))
	require.Equal(t, untrustedNotice, got.Notice)
	require.Equal(t, "LISBON", got.Query)
	require.Len(t, got.Results, 1, "the caller's own session is excluded")
	r := got.Results[0]
	require.Equal(t, "telegram:1", r.SessionKey)
	require.Equal(t, "#session/telegram:1", r.SessionRef)
	require.Equal(t, "Trip planning", r.Title)
	require.Len(t, r.Excerpts, 1)
	require.Equal(t, 1, r.Excerpts[0].MessageIndex)
	require.Contains(t, r.Excerpts[0].Content, "the Lisbon itinerary", "the window is around the hit")
	require.True(t, strings.HasPrefix(r.Excerpts[0].Content, "…") && strings.HasSuffix(r.Excerpts[0].Content, "…"))
	require.LessOrEqual(t, len([]rune(r.Excerpts[0].Content)), searchExcerptChars+2)

	res = run(t, NewSearchSessions(b), Env{SessionKey: "cli:me"}, `{"query": "   "}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "Error: search query must not be empty")
}

func TestReadSessionPagesBackByHandleOrKey(t *testing.T) {
	b := newFilesBook(t)
	var msgs []chat.Message
	for i := range 20 {
		msgs = append(msgs, chat.Message{Role: "user", Content: fmt.Sprintf("message %d", i), Turn: "t", EntryID: fmt.Sprint("u", i)})
		msgs = append(msgs, chat.Message{Role: "tool", Content: "tool noise", Turn: "t", EntryID: fmt.Sprint("x", i)})
	}
	b.say(t, "telegram:1", msgs...)
	b.say(t, "cli:me", msg("user", "t", "me"))
	handle := handleOfKey(t, b, "telegram:1")
	type page struct {
		Handle   string `json:"handle"`
		Messages []struct {
			MessageIndex int    `json:"message_index"`
			Content      string `json:"content"`
		} `json:"messages"`
		More bool `json:"more"`
	}
	read := func(args string) page {
		t.Helper()
		res := run(t, NewReadSession(b), Env{SessionKey: "cli:me"}, args)
		require.False(t, res.IsError, res.Text)
		var p page
		require.NoError(t, json.Unmarshal([]byte(res.Text), &p))
		return p
	}
	p := read(`{"session_key": "` + handle + `"}`)
	require.Equal(t, handle, p.Handle)
	require.Len(t, p.Messages, readSessionPage)
	require.Equal(t, "message 12", p.Messages[0].Content)
	require.Equal(t, "message 19", p.Messages[7].Content, "the latest page, tool traffic left out")
	require.True(t, p.More)

	p = read(fmt.Sprintf(`{"session_key": "telegram:1", "before": %d}`, p.Messages[0].MessageIndex))
	require.Equal(t, "message 4", p.Messages[0].Content)
	require.Equal(t, "message 11", p.Messages[7].Content, "the page before")
	p = read(fmt.Sprintf(`{"session_key": "telegram:1", "before": %d}`, p.Messages[0].MessageIndex))
	require.Len(t, p.Messages, 4)
	require.False(t, p.More, "the first page")

	p = read(`{"session_key": "telegram:1", "query": "MESSAGE 1"}`)
	require.Len(t, p.Messages, readSessionPage, "message 1 and 10-19 match; the newest 8")
	require.Equal(t, "message 12", p.Messages[0].Content)

	for args, want := range map[string]string{
		`{"session_key": "cli:me"}`:                    "Error: session not found: cli:me",
		`{"session_key": "subagent:x"}`:                "Error: session not found: subagent:x",
		`{"session_key": "@zzzz"}`:                     "Error: session @zzzz was not found",
		`{"session_key": "@no"}`:                       "Error: session handle is invalid",
		`{"session_key": "telegram:1", "query": "  "}`: "Error: query must not be empty",
	} {
		res := run(t, NewReadSession(b), Env{SessionKey: "cli:me"}, args)
		require.True(t, res.IsError, args)
		require.Contains(t, res.Text, want, args)
	}
}

func TestSendSessionMessageChecksAndLimits(t *testing.T) {
	b := newFilesBook(t)
	b.say(t, "telegram:1", msg("user", "t", "hi"))
	b.say(t, "cli:me", msg("user", "t", "me"))
	target, me := handleOfKey(t, b, "telegram:1"), handleOfKey(t, b, "cli:me")
	tool := NewSendSessionMessage(b)
	env := Env{SessionKey: "cli:me"}

	res := run(t, tool, env, `{"to": "`+target+`", "content": "<think>hmm</think>ping", "expect_reply": true, "reply_timeout_seconds": 30}`)
	require.False(t, res.IsError, res.Text)
	require.Equal(t, "Sent to "+target+". A timeout notice will arrive after 30s unless it replies.", res.Text)
	require.Len(t, b.delivered, 1)
	d := b.delivered[0]
	require.Equal(t, "telegram:1", d.To.Key)
	require.Equal(t, "cli:me", d.From.Key)
	require.True(t, d.ExpectReply)
	require.Equal(t, 30, d.TimeoutSeconds)

	res = run(t, tool, env, `{"to": "`+target+`", "content": "x", "expect_reply": false}`)
	require.Equal(t, "Sent to "+target+".", res.Text)

	for args, want := range map[string]string{
		`{"to": "` + target + `", "content": "x", "expect_reply": true}`:                              "Error: expect_reply=true requires reply_timeout_seconds between 5 and 60",
		`{"to": "` + target + `", "content": "x", "expect_reply": true, "reply_timeout_seconds": 61}`: "Error: Invalid parameters", // the schema's bound
		`{"to": "@zzzz", "content": "x", "expect_reply": false}`:                                      "Error: session @zzzz was not found",
		`{"to": "not a handle", "content": "x", "expect_reply": false}`:                               "Error: session handle is invalid",
		`{"to": "` + me + `", "content": "x", "expect_reply": false}`:                                 "is this session",
	} {
		res := run(t, tool, env, args)
		require.True(t, res.IsError, args)
		require.Contains(t, res.Text, want, args)
	}
	res = run(t, tool, Env{SessionKey: "heartbeat"}, `{"to": "`+target+`", "content": "x", "expect_reply": false}`)
	require.Contains(t, res.Text, "Error: source session was not found")
	require.Len(t, b.delivered, 2, "no refused call delivered anything")

	// The limit counts the sends the journal holds from the last minute.
	b.limit = 2
	now := time.Now()
	journalSend := func(id string, at time.Time, text string) {
		b.say(t, "cli:me", chat.Message{Role: chat.RoleTool, Name: "send_session_message", Content: text, Turn: "t2", EntryID: id,
			Timestamp: at.Format(session.TimeLayout)})
	}
	journalSend("a", now.Add(-2*time.Minute), "Sent to "+target+".")
	journalSend("b", now.Add(-10*time.Second), "Sent to "+target+".")
	journalSend("c", now.Add(-5*time.Second), "Error: session @zzzz was not found")
	res = run(t, tool, env, `{"to": "`+target+`", "content": "x", "expect_reply": false}`)
	require.False(t, res.IsError, "one send in the window, limit 2: %s", res.Text)
	journalSend("d", now, "Sent to "+target+".")
	res = run(t, tool, env, `{"to": "`+target+`", "content": "x", "expect_reply": false}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Text, "Error: session message rate limit reached (2/minute)")
}

// The turn policy decides who may use the session tools: chat and cron
// turns all four, the heartbeat may look but not send, subagents and Dream none.
func TestSessionToolsByKindOfTurn(t *testing.T) {
	b := newFilesBook(t)
	r := NewRegistry()
	require.NoError(t, RegisterBuiltins(r, BuiltinOptions{DisableFiles: true, Sessions: b}))
	all := []string{"list_sessions", "read_session", "search_sessions", "send_session_message"}
	offered := func(kind protocol.TurnKind) []string {
		var out []string
		for _, d := range NewPolicy(protocol.ProfileFor(kind, false), t.TempDir()).Offer(r.Definitions()) {
			out = append(out, d.Name)
		}
		return out
	}
	require.Equal(t, all, offered(protocol.ChatTurn))
	require.Equal(t, all, offered(protocol.CronTurn))
	require.Equal(t, all[:3], offered(protocol.HeartbeatTurn))
	require.Empty(t, offered(protocol.SubagentTurn))
	require.Empty(t, offered(protocol.DreamTurn))
	err := NewPolicy(protocol.ProfileFor(protocol.HeartbeatTurn, false), t.TempDir()).Permit("send_session_message", nil)
	require.EqualError(t, err, heartbeatSessionText)
}
