package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
)

func newStore(t *testing.T) *JSONLStore {
	t.Helper()
	s, err := NewJSONLStore(t.TempDir(), nil)
	require.NoError(t, err)
	return s
}

func TestAppendIsIdempotentByTurnAndEntry(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	m := chat.Message{Role: chat.RoleUser, Content: "hi", Turn: "t1", EntryID: "user"}
	n, err := s.Append(ctx, "cli:direct", m)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = s.Append(ctx, "cli:direct", m)
	require.NoError(t, err)
	require.Equal(t, 0, n, "a retried append writes nothing")
	n, err = s.Append(ctx, "cli:direct", chat.Message{Role: chat.RoleUser, Content: "hi", Turn: "t2", EntryID: "user"})
	require.NoError(t, err)
	require.Equal(t, 1, n, "another turn's entry with the same ID is new")
	sess, err := s.Load(ctx, "cli:direct")
	require.NoError(t, err)
	require.Len(t, sess.Messages, 2)
	require.NotEmpty(t, sess.Messages[0].Timestamp)
}

func TestFileIsNanobotFormat(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	_, err := s.Append(ctx, "telegram:42",
		chat.Message{Role: chat.RoleUser, Content: "read it", Turn: "t", EntryID: "user"},
		chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "c1", Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: `{"path":"a"}`}}}, Turn: "t", EntryID: "llm-1"},
		chat.Message{Role: chat.RoleTool, ToolCallID: "c1", Name: "read_file", Content: "text", Turn: "t", EntryID: "tool-c1"})
	require.NoError(t, err)
	data, err := os.ReadFile(s.Path("telegram:42"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 4)
	require.Contains(t, lines[0], `"_type":"metadata"`)
	require.Contains(t, lines[0], `"key":"telegram:42"`)
	require.Contains(t, lines[0], `"last_consolidated":0`)
	require.Contains(t, lines[2], `"content":null`)
	require.Contains(t, lines[2], `"tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]`)
	require.Contains(t, lines[3], `"tool_call_id":"c1"`)
	require.True(t, strings.HasSuffix(s.Path("telegram:42"), "dGVsZWdyYW06NDI.jsonl"))
}

func TestCorruptLinesAreSkippedAndReported(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	content := `{"_type":"metadata","key":"cli:x","created_at":"2026-01-02T03:04:05.000001","updated_at":"2026-01-02T03:04:05","metadata":{"a":1},"last_consolidated":1}
{"role":"user","content":"one"}
{"role":"assistant","content":"two"
not json at all
{"_type":"provider_state","state":{}}
{"role":"user","content":[{"type":"text","text":"three"},{"type":"image_url","image_url":{"url":"x"}}]}
{"role":"assistant","content":42}
`
	require.NoError(t, os.WriteFile(s.Path("cli:x"), []byte(content), 0o600))
	sess, err := s.Load(ctx, "cli:x")
	require.NoError(t, err)
	require.Len(t, sess.Messages, 2)
	require.Equal(t, "one", sess.Messages[0].Content)
	require.Equal(t, "three", sess.Messages[1].Content)
	require.NotEmpty(t, sess.Messages[1].ContentParts)
	require.Len(t, sess.Problems, 3)
	require.Contains(t, sess.Problems[0], "line 3")
	require.Equal(t, 1, sess.LastConsolidated)
	require.Equal(t, float64(1), sess.Metadata["a"])

	// Writing keeps the readable lines (and the multimodal parts) and drops the broken ones.
	_, err = s.Append(ctx, "cli:x", chat.Message{Role: chat.RoleAssistant, Content: "four", Turn: "t", EntryID: "final"})
	require.NoError(t, err)
	sess, err = s.Load(ctx, "cli:x")
	require.NoError(t, err)
	require.Empty(t, sess.Problems)
	require.Len(t, sess.Messages, 3)
	require.JSONEq(t, `[{"type":"text","text":"three"},{"type":"image_url","image_url":{"url":"x"}}]`, string(sess.Messages[1].ContentParts))
}

func TestClaimOnce(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	ok, err := s.Claim(ctx, "cli:a", "t1", "tool-c1")
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = s.Claim(ctx, "cli:a", "t1", "tool-c1")
	require.NoError(t, err)
	require.False(t, ok, "the second claim finds the first")
	ok, err = s.Claim(ctx, "cli:a", "t1", "tool-c2")
	require.NoError(t, err)
	require.True(t, ok)
}

func TestConcurrentAppendsLoseNothing(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := s.Append(ctx, "cli:c", chat.Message{Role: chat.RoleUser, Content: "m", Turn: "t", EntryID: string(rune('a' + i))})
			require.NoError(t, err)
		}(i)
	}
	wg.Wait()
	sess, err := s.Load(ctx, "cli:c")
	require.NoError(t, err)
	require.Len(t, sess.Messages, 20)
}

func TestTurnData(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	_, err := s.TurnData(ctx, "cli:a", "t1", "system")
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, s.PutTurnData(ctx, "cli:a", "t1", "system", []byte("prompt")))
	got, err := s.TurnData(ctx, "cli:a", "t1", "system")
	require.NoError(t, err)
	require.Equal(t, "prompt", string(got))
}

func TestHistoryRules(t *testing.T) {
	u := func(s string) chat.Message { return chat.Message{Role: chat.RoleUser, Content: s} }
	a := func(s string) chat.Message { return chat.Message{Role: chat.RoleAssistant, Content: s} }
	tool := chat.Message{Role: chat.RoleTool, ToolCallID: "x", Content: "orphan"}
	cmd := chat.Message{Role: chat.RoleUser, Content: "/status", Command: true}
	cmdReply := chat.Message{Role: chat.RoleAssistant, Content: "Model: x", Command: true}
	cases := []struct {
		name   string
		msgs   []chat.Message
		lc     int
		budget int
		want   []string
	}{
		{"all", []chat.Message{u("1"), a("2"), u("3"), a("4")}, 0, 0, []string{"1", "2", "3", "4"}},
		{"leading orphans dropped", []chat.Message{tool, a("x"), u("1"), a("2")}, 0, 0, []string{"1", "2"}},
		{"commands skipped", []chat.Message{u("1"), cmd, cmdReply, a("2")}, 0, 0, []string{"1", "2"}},
		{"empty assistant dropped", []chat.Message{u("1"), a(""), a("2")}, 0, 0, []string{"1", "2"}},
		{"from last_consolidated", []chat.Message{u("1"), a("2"), u("3"), a("4"), u("5"), a("6"), u("7"), a("8"), u("9"), a("10"), u("11"), a("12")}, 2, 0,
			[]string{"3", "4", "5", "6", "7", "8", "9", "10", "11", "12"}},
		{"recent floor beats consolidation", []chat.Message{u("1"), a("2"), u("3"), a("4"), u("5"), a("6"), u("7"), a("8"), u("9"), a("10"), u("11"), a("12")}, 12, 0,
			[]string{"5", "6", "7", "8", "9", "10", "11", "12"}},
		{"budget trims oldest exchanges, keeps the current user", []chat.Message{u(strings.Repeat("x", 400)), a("2"), u("3"), a("4"), u("5")}, 0, 10,
			[]string{"5"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &Session{Messages: tc.msgs, LastConsolidated: tc.lc}
			var got []string
			for _, m := range s.History(tc.budget, func(m chat.Message) int { return len(m.Content)/4 + 4 }) {
				got = append(got, m.Content)
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func TestAppendAfterTornLineRepairsTheFile(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	_, err := s.Append(ctx, "cli:torn", chat.Message{Role: chat.RoleUser, Content: "one", Turn: "t", EntryID: "user"})
	require.NoError(t, err)
	f, err := os.OpenFile(s.Path("cli:torn"), os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(`{"role":"assistant","content":"cut in the mid`) // a crash mid-append
	require.NoError(t, err)
	require.NoError(t, f.Close())

	_, err = s.Append(ctx, "cli:torn", chat.Message{Role: chat.RoleAssistant, Content: "two", Turn: "t", EntryID: "llm-1"})
	require.NoError(t, err)
	sess, err := s.Load(ctx, "cli:torn")
	require.NoError(t, err)
	require.Empty(t, sess.Problems, "the rewrite dropped the torn line")
	require.Len(t, sess.Messages, 2)
	require.Equal(t, "two", sess.Messages[1].Content)
}

func TestCacheSeesWritesByOtherProcesses(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	_, err := s.Append(ctx, "cli:x", chat.Message{Role: chat.RoleUser, Content: "one", Turn: "t", EntryID: "user"})
	require.NoError(t, err)
	_, err = s.Load(ctx, "cli:x") // cached now
	require.NoError(t, err)
	other, err := NewJSONLStore(filepath.Dir(s.Path("cli:x")), nil)
	require.NoError(t, err)
	_, err = other.Append(ctx, "cli:x", chat.Message{Role: chat.RoleAssistant, Content: "from another worker", Turn: "t", EntryID: "llm-1"})
	require.NoError(t, err)
	sess, err := s.Load(ctx, "cli:x")
	require.NoError(t, err)
	require.Len(t, sess.Messages, 2)

	// Callers may change what they load without touching the cache.
	sess.Messages[0].Content = "changed"
	sess.Metadata["k"] = "v"
	again, err := s.Load(ctx, "cli:x")
	require.NoError(t, err)
	require.Equal(t, "one", again.Messages[0].Content)
	require.NotContains(t, again.Metadata, "k")
}

func TestPruneTurnDataKeepsTheNewest(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	base := time.Now().Add(-time.Hour)
	for i := 0; i < 5; i++ {
		turn := fmt.Sprintf("t%d", i)
		require.NoError(t, s.PutTurnData(ctx, "cli:p", turn, "system", []byte(turn)))
		at := base.Add(time.Duration(i) * time.Minute)
		require.NoError(t, os.Chtimes(filepath.Join(s.turnDir("cli:p"), safeName(turn)), at, at))
	}
	require.NoError(t, s.PruneTurnData(ctx, "cli:p", 2))
	for i, want := range []bool{false, false, false, true, true} {
		_, err := s.TurnData(ctx, "cli:p", fmt.Sprintf("t%d", i), "system")
		require.Equal(t, want, err == nil, "turn t%d", i)
	}
	require.NoError(t, s.PruneTurnData(ctx, "cli:none", 2), "a session without turn data")
}

// A session's kind is kept in its metadata line and survives a reload;
// SessionsOfKind finds sessions by it, whatever their keys.
func TestSessionKindIsKeptAndListed(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	for _, key := range []string{"cli:a", "dream:20260101-000000", "cli:b"} {
		_, err := s.Append(ctx, key, chat.Message{Role: chat.RoleUser, Content: "hi", Turn: "t", EntryID: "user"})
		require.NoError(t, err)
	}
	require.NoError(t, s.Update(ctx, "cli:b", func(sess *Session) error { sess.Kind = "dream"; return nil }))
	reopened, err := NewJSONLStore(s.dir, nil)
	require.NoError(t, err)
	sess, err := reopened.Load(ctx, "cli:b")
	require.NoError(t, err)
	require.Equal(t, "dream", sess.Kind)
	infos, err := reopened.SessionsOfKind("dream")
	require.NoError(t, err)
	require.Len(t, infos, 1, "a dream: key is not a kind")
	require.Equal(t, "cli:b", infos[0].Key)
	all, err := reopened.Sessions()
	require.NoError(t, err)
	require.Len(t, all, 3)
}
