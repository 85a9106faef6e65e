// Package storetest is the contract every storage backend passes (the JSONL
// files and PostgreSQL): the same tests for sessions, usage, pairing, the
// memory archive and dedupe sets, run by each backend's package.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/session"
)

// Sessions runs the session store's contract.
func Sessions(t *testing.T, fresh Fresh[session.Store]) {
	run(t, fresh, []test[session.Store]{
		{"LoadMissingIsEmpty", loadMissingIsEmpty},
		{"AppendIsIdempotent", appendIsIdempotent},
		{"ConcurrentAppendsWriteEachEntryOnce", concurrentAppends},
		{"ConcurrentUpdatesLoseNoWrite", concurrentUpdates},
		{"UpdateRewritesAndKeepsOrder", updateRewrites},
		{"FailedUpdateChangesNothing", failedUpdate},
		{"ClaimHoldsOnceAcrossInstances", claimOnce},
		{"TurnData", turnData},
		{"ListKindAndDelete", listKindDelete},
		{"MetadataRoundTrips", metadataRoundTrips},
		{"SearchFindsVisibleText", searchFindsVisibleText},
		{"ALoadSeesAnotherInstancesWrites", loadSeesOthersWrites},
		{"WritesAfterReadsKeepEveryChange", writesAfterReads},
	})
}

func user(turn, id, text string) chat.Message {
	return chat.Message{Role: chat.RoleUser, Content: text, Turn: turn, EntryID: id}
}

func contents(s *session.Session) []string {
	out := []string{}
	for _, m := range s.Messages {
		out = append(out, m.Content)
	}
	return out
}

func load(t *testing.T, s session.Store, key string) *session.Session {
	t.Helper()
	sess, err := s.Load(context.Background(), key)
	require.NoError(t, err)
	return sess
}

func loadMissingIsEmpty(t *testing.T, open Open[session.Store]) {
	sess := load(t, open(t), "cli:nobody")
	require.Equal(t, "cli:nobody", sess.Key)
	require.Empty(t, sess.Messages)
	require.NotNil(t, sess.Metadata, "callers write into the metadata map")
	require.Zero(t, sess.LastConsolidated)
	require.Empty(t, sess.Kind)
}

func appendIsIdempotent(t *testing.T, open Open[session.Store]) {
	s, ctx := open(t), context.Background()
	n, err := s.Append(ctx, "cli:a", user("t1", "user", "one"), user("t1", "llm-1", "two"))
	require.NoError(t, err)
	require.Equal(t, 2, n)
	n, err = s.Append(ctx, "cli:a", user("t1", "user", "one again"), user("t1", "llm-2", "three"), user("t1", "llm-2", "three twice"))
	require.NoError(t, err)
	require.Equal(t, 1, n, "a retried entry and a repeat inside one call are skipped")
	n, err = s.Append(ctx, "cli:a", user("t2", "user", "four"), chat.Message{Role: chat.RoleUser, Content: "five"}, chat.Message{Role: chat.RoleUser, Content: "five"})
	require.NoError(t, err)
	require.Equal(t, 3, n, "another turn's entry with the same ID is new; entries without an ID always are")
	n, err = s.Append(ctx, "cli:a")
	require.NoError(t, err)
	require.Zero(t, n)
	sess := load(t, open(t), "cli:a")
	require.Equal(t, []string{"one", "two", "three", "four", "five", "five"}, contents(sess))
	for _, m := range sess.Messages {
		require.NotEmpty(t, m.Timestamp, "append stamps the time")
	}
	require.Equal(t, 2, sess.Find("t1", "llm-2"))
	require.Equal(t, -1, sess.Find("t9", "user"))
	n, err = s.Append(ctx, "cli:b", user("t1", "user", "x"))
	require.NoError(t, err)
	require.Equal(t, 1, n, "sessions are apart")
}

func concurrentAppends(t *testing.T, open Open[session.Store]) {
	stores := []session.Store{open(t), open(t)}
	var wg sync.WaitGroup
	var written atomic.Int64
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 { // every goroutine tries every entry: each lands once
				n, err := stores[g%2].Append(context.Background(), "cli:race", user("t", fmt.Sprint("e", i), fmt.Sprint(i)))
				if err != nil {
					t.Error(err)
					return
				}
				written.Add(int64(n))
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, 10, written.Load(), "each entry written by exactly one append")
	sess := load(t, stores[0], "cli:race")
	require.Len(t, sess.Messages, 10)
	seen := map[string]bool{}
	for _, m := range sess.Messages {
		require.False(t, seen[m.EntryID], "entry %s twice", m.EntryID)
		seen[m.EntryID] = true
	}
}

func concurrentUpdates(t *testing.T, open Open[session.Store]) {
	stores := []session.Store{open(t), open(t)}
	const goroutines, each = 12, 5
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				err := stores[g%2].Update(context.Background(), "cli:count", func(s *session.Session) error {
					n, _ := s.Metadata["n"].(float64)
					s.Metadata["n"] = n + 1
					s.Messages = append(s.Messages, user(fmt.Sprint("g", g), fmt.Sprint(i), "x"))
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	sess := load(t, open(t), "cli:count")
	require.EqualValues(t, goroutines*each, sess.Metadata["n"], "no update lost")
	require.Len(t, sess.Messages, goroutines*each, "no message lost")
}

func updateRewrites(t *testing.T, open Open[session.Store]) {
	s, ctx := open(t), context.Background()
	_, err := s.Append(ctx, "cli:u", user("t1", "a", "a"), user("t1", "b", "b"), user("t1", "c", "c"), user("t1", "d", "d"))
	require.NoError(t, err)
	before := time.Now().Add(-time.Second)
	err = s.Update(ctx, "cli:u", func(sess *session.Session) error {
		require.Len(t, sess.Messages, 4)
		sess.Messages[2].Content = "C"                                          // an edit in the middle
		sess.Messages = sess.Messages[1:]                                       // the oldest dropped
		sess.Messages[0], sess.Messages[1] = sess.Messages[1], sess.Messages[0] // reordered
		sess.Messages = append(sess.Messages, user("t2", "e", "e"))
		sess.Kind, sess.LastConsolidated = "dream", 2
		return nil
	})
	require.NoError(t, err)
	got := load(t, open(t), "cli:u")
	require.Equal(t, []string{"C", "b", "d", "e"}, contents(got))
	require.Equal(t, "dream", got.Kind)
	require.Equal(t, 2, got.LastConsolidated)
	require.True(t, got.UpdatedAt.After(before), "updated_at moves on save")
	require.False(t, got.CreatedAt.IsZero())

	n, err := s.Append(ctx, "cli:u", user("t1", "a", "a is back"), user("t1", "b", "b again"))
	require.NoError(t, err)
	require.Equal(t, 1, n, "the dropped entry is new again, the kept one is still there")
	require.Equal(t, []string{"C", "b", "d", "e", "a is back"}, contents(load(t, s, "cli:u")))

	require.NoError(t, s.Update(ctx, "cli:u", func(sess *session.Session) error {
		sess.Messages, sess.LastConsolidated = nil, 9
		return nil
	}))
	got = load(t, open(t), "cli:u")
	require.Empty(t, got.Messages, "/new clears")
	require.Zero(t, got.LastConsolidated, "a reader never sees last_consolidated past the messages")
}

func failedUpdate(t *testing.T, open Open[session.Store]) {
	s, ctx := open(t), context.Background()
	_, err := s.Append(ctx, "cli:f", user("t1", "a", "a"))
	require.NoError(t, err)
	boom := errors.New("boom")
	err = s.Update(ctx, "cli:f", func(sess *session.Session) error {
		sess.Messages = nil
		sess.Metadata["x"] = "y"
		return boom
	})
	require.ErrorIs(t, err, boom)
	got := load(t, open(t), "cli:f")
	require.Equal(t, []string{"a"}, contents(got))
	require.NotContains(t, got.Metadata, "x")
}

func claimOnce(t *testing.T, open Open[session.Store]) {
	stores := []session.Store{open(t), open(t)}
	var wins atomic.Int64
	var wg sync.WaitGroup
	for g := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := stores[g%2].Claim(context.Background(), "cli:c", "t1", "tool-c1")
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, 1, wins.Load(), "one claim holds across instances")
	ctx := context.Background()
	ok, err := stores[1].Claim(ctx, "cli:c", "t1", "tool-c1")
	require.NoError(t, err)
	require.False(t, ok, "a retry finds the claim")
	for _, other := range [][3]string{{"cli:c", "t1", "tool-c2"}, {"cli:c", "t2", "tool-c1"}, {"cli:d", "t1", "tool-c1"}} {
		ok, err := stores[0].Claim(ctx, other[0], other[1], other[2])
		require.NoError(t, err)
		require.True(t, ok, "claim %v is its own", other)
	}
}

func turnData(t *testing.T, open Open[session.Store]) {
	s, ctx := open(t), context.Background()
	_, err := s.TurnData(ctx, "cli:td", "t1", "system")
	require.ErrorIs(t, err, os.ErrNotExist, "a missing blob is os.ErrNotExist")
	require.NoError(t, s.PutTurnData(ctx, "cli:td", "t1", "system", []byte("prompt one")))
	require.NoError(t, s.PutTurnData(ctx, "cli:td", "t1", "system", []byte("prompt 1")))
	data, err := open(t).TurnData(ctx, "cli:td", "t1", "system")
	require.NoError(t, err)
	require.Equal(t, "prompt 1", string(data), "the last put wins")
	bin := []byte{0, 1, 2, 255, '\n'}
	require.NoError(t, s.PutTurnData(ctx, "cli:td", "t1", "raw/../x", bin))
	data, err = s.TurnData(ctx, "cli:td", "t1", "raw/../x")
	require.NoError(t, err)
	require.Equal(t, bin, data, "bytes and odd names round-trip")
	_, err = s.TurnData(ctx, "cli:other", "t1", "system")
	require.ErrorIs(t, err, os.ErrNotExist, "sessions are apart")
	require.NoError(t, s.AddTurnData(ctx, "cli:td", "t1", "tools", []byte("first")))
	require.NoError(t, open(t).AddTurnData(ctx, "cli:td", "t1", "tools", []byte("second")))
	require.NoError(t, s.AddTurnData(ctx, "cli:td", "t1", "tools", []byte("third")))
	for _, reader := range []session.Store{s, open(t)} {
		data, err = reader.TurnData(ctx, "cli:td", "t1", "tools")
		require.NoError(t, err)
		require.Equal(t, "first", string(data), "the first add wins")
	}

	for _, turn := range []string{"t2", "t3", "t4"} {
		time.Sleep(2 * time.Millisecond) // the newest turn is the last written: keep the clocks apart
		require.NoError(t, s.PutTurnData(ctx, "cli:td", turn, "system", []byte(turn)))
	}
	require.NoError(t, s.PruneTurnData(ctx, "cli:td", 2))
	for turn, kept := range map[string]bool{"t1": false, "t2": false, "t3": true, "t4": true} {
		_, err := s.TurnData(ctx, "cli:td", turn, "system")
		if kept {
			require.NoError(t, err, turn)
		} else {
			require.ErrorIs(t, err, os.ErrNotExist, turn)
		}
	}
	require.NoError(t, s.PruneTurnData(ctx, "cli:none", 2), "nothing to prune is fine")
}

func listKindDelete(t *testing.T, open Open[session.Store]) {
	s, ctx := open(t), context.Background()
	lister, ok := s.(session.Lister)
	require.True(t, ok, "every backend lists its sessions")
	_, err := s.Append(ctx, "cli:one", user("t", "u", "x"))
	require.NoError(t, err)
	require.NoError(t, s.Update(ctx, "dream:d", func(sess *session.Session) error { sess.Kind = "dream"; return nil }))
	_, err = s.Claim(ctx, "cli:claims-only", "t", "c")
	require.NoError(t, err)
	require.NoError(t, s.PutTurnData(ctx, "cli:claims-only", "t", "system", []byte("p")))

	infos, err := lister.Sessions()
	require.NoError(t, err)
	keys := []string{}
	for _, i := range infos {
		keys = append(keys, i.Key)
		require.WithinDuration(t, time.Now(), i.Modified, time.Minute)
	}
	sort.Strings(keys)
	require.Equal(t, []string{"cli:one", "dream:d"}, keys, "claims and turn data alone are no session")

	dreams, err := lister.SessionsOfKind("dream")
	require.NoError(t, err)
	require.Len(t, dreams, 1)
	require.Equal(t, "dream:d", dreams[0].Key)
	chats, err := lister.SessionsOfKind("")
	require.NoError(t, err)
	require.Len(t, chats, 1)
	require.Equal(t, "cli:one", chats[0].Key)

	first := infos[0].Modified
	for _, i := range infos {
		if i.Key == "cli:one" {
			first = i.Modified
		}
	}
	time.Sleep(5 * time.Millisecond)
	_, err = s.Append(ctx, "cli:one", user("t", "u2", "y"))
	require.NoError(t, err)
	infos, err = lister.Sessions()
	require.NoError(t, err)
	for _, i := range infos {
		if i.Key == "cli:one" {
			require.True(t, i.Modified.After(first), "an append counts as a change")
		}
	}

	_, err = s.Claim(ctx, "cli:one", "t", "tool-1")
	require.NoError(t, err)
	require.NoError(t, s.PutTurnData(ctx, "cli:one", "t", "system", []byte("p")))
	require.NoError(t, lister.Delete("cli:one"))
	require.Empty(t, load(t, s, "cli:one").Messages)
	ok, err = s.Claim(ctx, "cli:one", "t", "tool-1")
	require.NoError(t, err)
	require.True(t, ok, "a deleted session's claims go with it")
	_, err = s.TurnData(ctx, "cli:one", "t", "system")
	require.ErrorIs(t, err, os.ErrNotExist, "and its turn data")
	require.NoError(t, lister.Delete("cli:never"), "deleting nothing is fine")
}

func metadataRoundTrips(t *testing.T, open Open[session.Store]) {
	s, ctx := open(t), context.Background()
	msg := chat.Message{Role: chat.RoleAssistant, Content: "<b>é ✓ \x00</b>", Turn: "t", EntryID: "llm-1", LatencyMS: 12,
		ToolCalls: []chat.ToolCall{{ID: "c1", Type: "function", Function: chat.FunctionCall{Name: "exec", Arguments: `{"cmd":"ls"}`}}}}
	require.NoError(t, s.Update(ctx, "cli:m", func(sess *session.Session) error {
		sess.Metadata["goal"] = map[string]any{"text": "ship it", "turns": 3.0}
		sess.Metadata["tags"] = []any{"a", "b"}
		sess.Messages = append(sess.Messages, msg)
		return nil
	}))
	got := load(t, open(t), "cli:m")
	require.Equal(t, map[string]any{"text": "ship it", "turns": 3.0}, got.Metadata["goal"])
	require.Equal(t, []any{"a", "b"}, got.Metadata["tags"])
	require.Len(t, got.Messages, 1)
	require.Equal(t, msg.Content, got.Messages[0].Content, "HTML, accents and NUL survive")
	require.Equal(t, msg.ToolCalls, got.Messages[0].ToolCalls)
	require.EqualValues(t, 12, got.Messages[0].LatencyMS)
}

// loadSeesOthersWrites: an instance that has read a session (and may keep its parse) reads what
// another instance wrote since, an append, a rewrite that keeps the message count, and a delete.
func loadSeesOthersWrites(t *testing.T, open Open[session.Store]) {
	a, b, ctx := open(t), open(t), context.Background()
	_, err := b.Append(ctx, "cli:seen", user("t1", "user", "one"))
	require.NoError(t, err)
	require.Equal(t, []string{"one"}, contents(load(t, a, "cli:seen")))
	require.Equal(t, []string{"one"}, contents(load(t, a, "cli:seen")), "a second read of an unchanged session")
	_, err = b.Append(ctx, "cli:seen", user("t2", "user", "two"))
	require.NoError(t, err)
	require.Equal(t, []string{"one", "two"}, contents(load(t, a, "cli:seen")))
	require.NoError(t, b.Update(ctx, "cli:seen", func(sess *session.Session) error {
		sess.Messages[1].Content = "TWO"
		sess.Metadata["seen"] = true
		return nil
	}))
	got := load(t, a, "cli:seen")
	require.Equal(t, []string{"one", "TWO"}, contents(got), "a rewrite of the same length")
	require.Equal(t, true, got.Metadata["seen"])
	got.Messages[0].Content = "changed by the caller"
	require.Equal(t, "one", load(t, a, "cli:seen").Messages[0].Content, "a caller's change stays its own")
	if lister, ok := b.(session.Lister); ok {
		require.NoError(t, lister.Delete("cli:seen"))
		require.Empty(t, load(t, a, "cli:seen").Messages, "deleted on another instance")
	}
}

// writesAfterReads: an instance that has read a session (and may keep its parse) writes it again:
// an in-place edit of a message's tool call, an append, an update after another instance's
// append, a drop from the middle; every change reaches a fresh reader, in order.
func writesAfterReads(t *testing.T, open Open[session.Store]) {
	a, b, ctx := open(t), open(t), context.Background()
	call := chat.Message{Role: chat.RoleAssistant, Turn: "t1", EntryID: "llm-1",
		ToolCalls: []chat.ToolCall{{ID: "c1", Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: `{"path":"a"}`}}}}
	_, err := a.Append(ctx, "cli:w", user("t1", "user", "one"), call)
	require.NoError(t, err)
	load(t, a, "cli:w")
	_, err = a.Append(ctx, "cli:w", chat.Message{Role: chat.RoleAssistant, Content: "done", Turn: "t1", EntryID: "final"})
	require.NoError(t, err)
	require.NoError(t, a.Update(ctx, "cli:w", func(sess *session.Session) error {
		require.Equal(t, []string{"one", "", "done"}, contents(sess), "the append after the read")
		sess.Messages[1].ToolCalls[0].Function.Arguments = `{"path":"b"}` // in place, through the slice
		sess.Messages[2].LatencyMS = 7
		return nil
	}))
	got := load(t, open(t), "cli:w")
	require.Equal(t, `{"path":"b"}`, got.Messages[1].ToolCalls[0].Function.Arguments, "an in-place edit is written")
	require.EqualValues(t, 7, got.Messages[2].LatencyMS)

	_, err = b.Append(ctx, "cli:w", user("t2", "user", "two"))
	require.NoError(t, err)
	require.NoError(t, a.Update(ctx, "cli:w", func(sess *session.Session) error {
		require.Equal(t, []string{"one", "", "done", "two"}, contents(sess), "another instance's append")
		sess.Messages = append(sess.Messages[:1], sess.Messages[2:]...)
		return nil
	}))
	require.Equal(t, []string{"one", "done", "two"}, contents(load(t, open(t), "cli:w")))
	_, err = a.Append(ctx, "cli:w", user("t3", "user", "three"))
	require.NoError(t, err)
	require.Equal(t, []string{"one", "done", "two", "three"}, contents(load(t, a, "cli:w")))
	require.Equal(t, []string{"one", "done", "two", "three"}, contents(load(t, open(t), "cli:w")))
}
