package integration

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
	"github.com/nanobot-durable/nanobot/usage"
)

// cacheBenchTurns is the length of B7's conversation.
const cacheBenchTurns = 20

// Anthropic's prices relative to an input token: a cache write costs 1.25×
// (5-minute entries), a cache read 0.1×.
const (
	cacheWriteWeight = 1.25
	cacheReadWeight  = 0.1
)

// promptCost is a conversation's prompt tokens, per turn on average.
type promptCost struct {
	billed, raw, read, write float64
}

// conversationCost runs B7's conversation through `nanobot agent` against a
// fresh Anthropic peer (its cache empty) and reads the cost from the usage records.
func conversationCost(t *testing.T, dev *testenv.DevServer, caching bool) promptCost {
	srv := modeltest.NewAnthropic().Handle(noteModel)
	defer srv.Close()
	home := claudePeerHome(t, srv, &caching)
	for n := 1; n <= cacheBenchTurns; n++ {
		out, errOut, code := runNanobot(t, home.Env(dev.Addr), "agent", "-m", fmt.Sprintf("read note %d", n), "-s", "cli:b7")
		require.Equal(t, 0, code, "stderr: %s", errOut)
		require.Contains(t, out, fmt.Sprintf("Note %d is read.", n))
	}
	turns := byTurn(usageRecords(t, home))
	require.Len(t, turns, cacheBenchTurns)
	var c promptCost
	for _, turn := range turns {
		for _, r := range turn {
			c.add(r)
		}
	}
	n := float64(cacheBenchTurns)
	return promptCost{billed: c.billed / n, raw: c.raw / n, read: c.read / n, write: c.write / n}
}

func (c *promptCost) add(r usage.Record) {
	input := r.Prompt - r.Cached - r.CacheWrite
	c.billed += float64(input) + cacheWriteWeight*float64(r.CacheWrite) + cacheReadWeight*float64(r.Cached)
	c.raw += float64(r.Prompt)
	c.read += float64(r.Cached)
	c.write += float64(r.CacheWrite)
}

// cacheRows is B7 (issue 24): prompt tokens per turn over a 20-turn tool
// conversation on the Anthropic path, caching on beside caching off
// (providers.anthropic.promptCaching false), from the usage records. It has
// a Temporal of its own: on the table's, the bench gateway would serve the turns.
func cacheRows(t *testing.T) []benchRow {
	dev := testenv.StartDevServer(t)
	on, off := conversationCost(t, dev, true), conversationCost(t, dev, false)
	tok := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	return []benchRow{
		{"B7", fmt.Sprintf("prompt tokens billed per turn, %d-turn tool conversation on the Anthropic path (input 1×, cache write 1.25×, cache read 0.1×): caching on (baseline column: caching off)", cacheBenchTurns),
			tok(on.billed), tok(off.billed), ratio(on.billed, off.billed), "< 1×", yes(on.billed < off.billed)},
		{"B7", "… raw prompt tokens per turn (input + cache write + cache read)", tok(on.raw), tok(off.raw), ratio(on.raw, off.raw), "", ""},
		{"B7", "… of which cache reads / cache writes per turn", tok(on.read) + " / " + tok(on.write), tok(off.read) + " / " + tok(off.write), "", "", ""},
	}
}

// TestBenchPromptCaching prints B7 alone (the table prints it with the rest).
func TestBenchPromptCaching(t *testing.T) {
	if os.Getenv("NANOBOT_BENCH_TABLE") == "" {
		t.Skip("benchmarks run with make bench (NANOBOT_BENCH_TABLE=1)")
	}
	for _, r := range cacheRows(t) {
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", r.id, r.what, r.durable, r.baseline, r.ratio, r.target, r.met)
	}
}
