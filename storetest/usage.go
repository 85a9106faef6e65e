package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/usage"
)

// Usage runs the usage store's contract.
func Usage(t *testing.T, fresh Fresh[usage.Store]) {
	run(t, fresh, []test[usage.Store]{
		{"RetriedCallCountsOnceWithItsLastFigures", usageRetried},
		{"SinceFilters", usageSince},
		{"ConcurrentHostsLoseNoCall", usageConcurrent},
	})
}

var usageDay = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func usageRetried(t *testing.T, open Open[usage.Store]) {
	s := open(t)
	require.NotEmpty(t, s.Where())
	first := usage.Record{Time: usageDay, Session: "cli:a", Turn: "t1", Call: "llm-1", Model: "m1", Provider: "openai", Prompt: 10, Completion: 2}
	require.NoError(t, s.Add(first))
	require.NoError(t, s.Add(usage.Record{Time: usageDay, Session: "cli:a", Turn: "t1", Call: "llm-2", Model: "m1", Prompt: 20, Completion: 3, Cached: 8, CacheWrite: 6, Kind: usage.KindConsolidate}))
	retry := first
	retry.Prompt, retry.Completion, retry.Estimated = 11, 4, true
	require.NoError(t, open(t).Add(retry)) // the retry ran on another host
	require.NoError(t, s.Add(usage.Record{Time: usageDay, Session: "cli:a", Turn: "t2", Call: "llm-1", Model: "m2", Prompt: 5}))

	recs, bad, err := open(t).Since(time.Time{})
	require.NoError(t, err)
	require.Zero(t, bad)
	require.Len(t, recs, 3, "one record per (session, turn, call)")
	require.Equal(t, "llm-1", recs[0].Call, "in the order calls were first recorded")
	require.Equal(t, 11, recs[0].Prompt, "the last attempt's figures stand")
	require.Equal(t, 4, recs[0].Completion)
	require.True(t, recs[0].Estimated)
	require.Equal(t, "openai", recs[0].Provider)
	require.True(t, recs[0].Time.Equal(usageDay))
	require.Equal(t, usage.KindConsolidate, recs[1].Kind)
	require.Equal(t, 8, recs[1].Cached)
	require.Equal(t, 6, recs[1].CacheWrite, "cache writes are kept beside cache reads")
	require.Equal(t, "t2", recs[2].Turn)
	tot := usage.ForTurn(recs, "cli:a", "t1")
	require.Equal(t, 31, tot.Prompt)
}

func usageSince(t *testing.T, open Open[usage.Store]) {
	s := open(t)
	recs, _, err := s.Since(time.Time{})
	require.NoError(t, err)
	require.Empty(t, recs, "nothing recorded is no error")
	for i := range 3 {
		require.NoError(t, s.Add(usage.Record{Time: usageDay.Add(time.Duration(i) * 24 * time.Hour), Session: "cli:a", Turn: fmt.Sprint("t", i), Call: "llm-1", Model: "m"}))
	}
	recs, _, err = s.Since(usageDay.Add(24 * time.Hour))
	require.NoError(t, err)
	require.Len(t, recs, 2, "at or after the time")
	require.Equal(t, "t1", recs[0].Turn)
}

func usageConcurrent(t *testing.T, open Open[usage.Store]) {
	stores := []usage.Store{open(t), open(t)}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				// Every call is recorded twice, by both hosts: a retried activity.
				for _, s := range stores {
					if err := s.Add(usage.Record{Time: usageDay, Session: fmt.Sprint("cli:", g), Turn: "t", Call: fmt.Sprint("llm-", i), Prompt: 1}); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	recs, _, err := stores[0].Since(time.Time{})
	require.NoError(t, err)
	require.Len(t, recs, 80)
	require.Equal(t, 80, usage.Summarize(recs, time.Time{}, time.UTC).Total.Prompt)
}
