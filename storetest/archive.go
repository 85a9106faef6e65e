package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/memory"
)

// Archive runs the memory archive's contract: history cursors and Dream's.
func Archive(t *testing.T, fresh Fresh[memory.Archive]) {
	run(t, fresh, []test[memory.Archive]{
		{"CursorsGrowAndIDsAreStoredOnce", archiveAppend},
		{"ConcurrentAppendsGetDistinctCursors", archiveConcurrent},
		{"DreamCursorMovesByCompareAndSet", archiveDreamCursor},
		{"KeepsTheNewestEntries", archiveCap},
	})
}

func archiveAppend(t *testing.T, open Open[memory.Archive]) {
	a, ctx := open(t), context.Background()
	entries, err := a.Entries(ctx)
	require.NoError(t, err)
	require.Empty(t, entries)
	for i := 1; i <= 3; i++ {
		e, err := a.Append(ctx, memory.Entry{Content: fmt.Sprint("entry ", i), SessionKey: "cli:a"})
		require.NoError(t, err)
		require.Equal(t, i, e.Cursor)
		require.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d$`, e.Timestamp)
	}
	first, err := a.Append(ctx, memory.Entry{Content: "summary", SessionKey: "cli:b", ID: "t1/round-1", Timestamp: "2026-01-02 10:00"})
	require.NoError(t, err)
	again, err := open(t).Append(ctx, memory.Entry{Content: "a retry's other summary", ID: "t1/round-1"})
	require.NoError(t, err)
	require.Equal(t, first, again, "a retry on another host gets the stored entry")
	long, err := a.Append(ctx, memory.Entry{Content: strings.Repeat("x", memory.MaxEntryChars+10)})
	require.NoError(t, err)
	require.Len(t, long.Content, memory.MaxEntryChars, "content is capped")

	entries, err = open(t).Entries(ctx)
	require.NoError(t, err)
	require.Len(t, entries, 5)
	require.Equal(t, memory.Entry{Cursor: 4, Timestamp: "2026-01-02 10:00", Content: "summary", SessionKey: "cli:b", ID: "t1/round-1"}, entries[3])
	got, ok, err := open(t).Find(ctx, "t1/round-1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, first, got)
	_, ok, err = a.Find(ctx, "nope")
	require.NoError(t, err)
	require.False(t, ok)
}

func archiveConcurrent(t *testing.T, open Open[memory.Archive]) {
	archives := []memory.Archive{open(t), open(t)}
	var wg sync.WaitGroup
	for g := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3 {
				if _, err := archives[g%2].Append(context.Background(), memory.Entry{Content: "x", ID: fmt.Sprint(g, "/", i)}); err != nil {
					t.Error(err)
				}
				// the same ID retried from the other host adds nothing
				if _, err := archives[(g+1)%2].Append(context.Background(), memory.Entry{Content: "y", ID: fmt.Sprint(g, "/", i)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	entries, err := archives[0].Entries(context.Background())
	require.NoError(t, err)
	require.Len(t, entries, 30)
	for i, e := range entries {
		require.Equal(t, i+1, e.Cursor, "cursors are distinct and in order")
		require.Equal(t, "x", e.Content)
	}
}

func archiveDreamCursor(t *testing.T, open Open[memory.Archive]) {
	a, ctx := open(t), context.Background()
	cur, err := a.Cursor(ctx)
	require.NoError(t, err)
	require.Zero(t, cur)
	for range 5 {
		_, err := a.Append(ctx, memory.Entry{Content: "e"})
		require.NoError(t, err)
	}
	moved, err := a.AdvanceCursor(ctx, 0, 3)
	require.NoError(t, err)
	require.True(t, moved)
	moved, err = open(t).AdvanceCursor(ctx, 0, 3)
	require.NoError(t, err)
	require.True(t, moved, "a retry of a move that happened")
	moved, err = a.AdvanceCursor(ctx, 0, 5)
	require.NoError(t, err)
	require.False(t, moved, "the cursor is no longer where this run found it")
	cur, err = open(t).Cursor(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, cur)
	from, rest, err := memory.Unprocessed(ctx, a, 10)
	require.NoError(t, err)
	require.Equal(t, 3, from)
	require.Len(t, rest, 2)

	archives := []memory.Archive{a, open(t)}
	var wins atomic.Int64
	var wg sync.WaitGroup
	for g := range 10 {
		wg.Add(1)
		go func() { // ten Dreams race from 3, each to its own end
			defer wg.Done()
			ok, err := archives[g%2].AdvanceCursor(context.Background(), 3, 10+g)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, 1, wins.Load(), "one Dream moves the cursor")
}

func archiveCap(t *testing.T, open Open[memory.Archive]) {
	a, ctx := open(t), context.Background()
	for i := 0; i < memory.MaxHistoryEntries+3; i++ {
		_, err := a.Append(ctx, memory.Entry{Content: fmt.Sprint(i)})
		require.NoError(t, err)
	}
	entries, err := open(t).Entries(ctx)
	require.NoError(t, err)
	require.Len(t, entries, memory.MaxHistoryEntries)
	require.Equal(t, 4, entries[0].Cursor, "the oldest entries go")
	e, err := a.Append(ctx, memory.Entry{Content: "next"})
	require.NoError(t, err)
	require.Equal(t, memory.MaxHistoryEntries+4, e.Cursor, "cursors keep growing")
}
