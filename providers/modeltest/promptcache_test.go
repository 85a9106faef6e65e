package modeltest_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// words counts whitespace-separated words, so every figure below is
// computed by hand: a text block of n words is n tokens.
func words(_, text string) int { return len(strings.Fields(text)) }

func text(n int, word string) string { return strings.TrimSpace(strings.Repeat(word+" ", n)) }

// blk is a text block, with a breakpoint when ttl is "5m", "1h" or "default".
func blk(s, ttl string) map[string]any {
	b := map[string]any{"type": "text", "text": s}
	switch ttl {
	case "default":
		b["cache_control"] = map[string]any{"type": "ephemeral"}
	case "5m", "1h":
		b["cache_control"] = map[string]any{"type": "ephemeral", "ttl": ttl}
	}
	return b
}

func msg(role string, blocks ...map[string]any) map[string]any {
	return map[string]any{"role": role, "content": blocks}
}

func request(t *testing.T, model string, tools []map[string]any, system []map[string]any, msgs ...map[string]any) []byte {
	t.Helper()
	body := map[string]any{"model": model, "max_tokens": 100, "messages": msgs}
	if tools != nil {
		body["tools"] = tools
	}
	if system != nil {
		body["system"] = system
	}
	b, err := json.Marshal(body)
	require.NoError(t, err)
	return b
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newCache() (*modeltest.PromptCache, *clock) {
	c := &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	return modeltest.NewPromptCache().WithCounter(words).WithClock(c.now), c
}

func account(t *testing.T, c *modeltest.PromptCache, body []byte) modeltest.CacheUsage {
	t.Helper()
	u, err := c.Account(body)
	require.NoError(t, err)
	return u
}

const sonnet = "claude-sonnet-4-5"

func TestPromptCacheSystemPrefixIsWrittenThenRead(t *testing.T) {
	c, _ := newCache()
	system := []map[string]any{blk(text(600, "a"), ""), blk(text(600, "b"), "default")}
	first := account(t, c, request(t, sonnet, nil, system, msg("user", blk("hi there", ""))))
	require.Equal(t, modeltest.CacheUsage{Input: 2, CacheWrite: 1200}, first, "1200 tokens up to the breakpoint are written")
	second := account(t, c, request(t, sonnet, nil, system, msg("user", blk("hello again friend", ""))))
	require.Equal(t, modeltest.CacheUsage{Input: 3, CacheRead: 1200}, second, "the same prefix is read back")
	other := account(t, c, request(t, "claude-opus-4-5", nil, system, msg("user", blk("hi", ""))))
	require.Equal(t, 0, other.CacheRead, "the cache is per model")
}

// TestPromptCacheHistoryBreakpointMovesForward is nanobot's pattern: the
// system prompt and the turn before the newest carry breakpoints; each call
// reads what the last one wrote, found by looking back from its breakpoint.
func TestPromptCacheHistoryBreakpointMovesForward(t *testing.T) {
	c, _ := newCache()
	system := []map[string]any{blk(text(1100, "s"), "default")}
	u1 := msg("user", blk("a b c", ""))
	require.Equal(t, modeltest.CacheUsage{Input: 3, CacheWrite: 1100},
		account(t, c, request(t, sonnet, nil, system, u1)))

	a1 := func(ttl string) map[string]any { return msg("assistant", blk("d e", ttl)) }
	require.Equal(t, modeltest.CacheUsage{Input: 1, CacheRead: 1100, CacheWrite: 5},
		account(t, c, request(t, sonnet, nil, system, u1, a1("default"), msg("user", blk("f", "")))),
		"read the system prompt, write u1 and a1 (3+2)")

	u2 := msg("user", blk("f", ""))
	a2 := msg("assistant", blk("g h i j", "default"))
	require.Equal(t, modeltest.CacheUsage{Input: 1, CacheRead: 1105, CacheWrite: 5},
		account(t, c, request(t, sonnet, nil, system, u1, a1(""), u2, a2, msg("user", blk("k", "")))),
		"read through a1 (written last call), write u2 and a2 (1+4)")

	changed := msg("user", blk("a b X", ""))
	require.Equal(t, modeltest.CacheUsage{Input: 1, CacheRead: 1100, CacheWrite: 10},
		account(t, c, request(t, sonnet, nil, system, changed, a1(""), u2, a2, msg("user", blk("k", "")))),
		"a changed byte in u1 misses every prefix after it: only the system prompt is read")
}

func TestPromptCacheToolsComeBeforeSystem(t *testing.T) {
	c, _ := newCache()
	// A tool block counts its JSON: with words, that is its description's words.
	tool := func(desc string, bp bool) map[string]any {
		tl := map[string]any{"name": "read_file", "description": desc, "input_schema": map[string]any{"type": "object"}}
		if bp {
			tl["cache_control"] = map[string]any{"type": "ephemeral"}
		}
		return tl
	}
	system := []map[string]any{blk(text(100, "s"), "default")}
	tools := []map[string]any{tool(text(1050, "t"), true)}
	require.Equal(t, modeltest.CacheUsage{Input: 1, CacheWrite: 1150},
		account(t, c, request(t, sonnet, tools, system, msg("user", blk("x", "")))))
	system2 := []map[string]any{blk(text(100, "z"), "default")}
	require.Equal(t, modeltest.CacheUsage{Input: 1, CacheRead: 1050, CacheWrite: 100},
		account(t, c, request(t, sonnet, tools, system2, msg("user", blk("x", "")))),
		"a new system prompt keeps the tools' prefix: tools come first")
	tools2 := []map[string]any{tool(text(1050, "t")+" more", true)}
	require.Equal(t, modeltest.CacheUsage{Input: 1, CacheWrite: 1151},
		account(t, c, request(t, sonnet, tools2, system, msg("user", blk("x", "")))),
		"a changed tool misses everything after it, the system prompt too")
}

func TestPromptCacheMinimumLength(t *testing.T) {
	c, _ := newCache()
	short := []map[string]any{blk(text(1023, "s"), "default")}
	for range 2 {
		require.Equal(t, modeltest.CacheUsage{Input: 1024},
			account(t, c, request(t, sonnet, nil, short, msg("user", blk("x", "")))), "1023 tokens are not cached")
	}
	enough := []map[string]any{blk(text(1024, "s"), "default")}
	require.Equal(t, 1024, account(t, c, request(t, sonnet, nil, enough, msg("user", blk("x", "")))).CacheWrite)
	const haiku = "claude-haiku-4-5"
	mid := []map[string]any{blk(text(1500, "s"), "default")}
	for range 2 {
		require.Equal(t, modeltest.CacheUsage{Input: 1501},
			account(t, c, request(t, haiku, nil, mid, msg("user", blk("x", "")))), "Haiku caches from 2048 tokens")
	}
	long := []map[string]any{blk(text(2048, "s"), "default")}
	account(t, c, request(t, haiku, nil, long, msg("user", blk("x", ""))))
	require.Equal(t, 2048, account(t, c, request(t, haiku, nil, long, msg("user", blk("y", "")))).CacheRead)
}

func TestPromptCacheTTL(t *testing.T) {
	c, clk := newCache()
	system := []map[string]any{blk(text(1100, "s"), "default")}
	body := request(t, sonnet, nil, system, msg("user", blk("x", "")))
	require.Equal(t, 1100, account(t, c, body).CacheWrite)
	clk.advance(4 * time.Minute)
	require.Equal(t, 1100, account(t, c, body).CacheRead, "within 5 minutes")
	clk.advance(4 * time.Minute)
	require.Equal(t, 1100, account(t, c, body).CacheRead, "the hit 4 minutes ago refreshed the entry")
	clk.advance(5*time.Minute + time.Second)
	require.Equal(t, modeltest.CacheUsage{Input: 1, CacheWrite: 1100}, account(t, c, body), "expired: written again")

	hour := []map[string]any{blk(text(1100, "h"), "1h"), blk(text(600, "m"), "5m")}
	hbody := request(t, sonnet, nil, hour, msg("user", blk("x", "")))
	require.Equal(t, modeltest.CacheUsage{Input: 1, CacheWrite: 1700, CacheWrite1h: 1100}, account(t, c, hbody))
	clk.advance(30 * time.Minute)
	require.Equal(t, modeltest.CacheUsage{Input: 1, CacheRead: 1100, CacheWrite: 600}, account(t, c, hbody),
		"the 1h prefix outlives the 5m one")
}

func TestPromptCacheLooksBackTwentyBlocks(t *testing.T) {
	c, _ := newCache()
	system := func(ttl string) []map[string]any { return []map[string]any{blk(text(1100, "s"), ttl)} }
	account(t, c, request(t, sonnet, nil, system("default"), msg("user", blk("x", ""))))
	blocks := func(n int, word string) map[string]any {
		var bs []map[string]any
		for i := range n {
			ttl := ""
			if i == n-1 {
				ttl = "default"
			}
			bs = append(bs, blk(word, ttl))
		}
		return msg("user", bs...)
	}
	// The only breakpoint is the last block; the system prompt's entry is
	// 19 positions back with 19 blocks, 20 with 20 (out of the window).
	require.Equal(t, modeltest.CacheUsage{CacheRead: 1100, CacheWrite: 19},
		account(t, c, request(t, sonnet, nil, system(""), blocks(19, "w"))))
	require.Equal(t, modeltest.CacheUsage{CacheWrite: 1120},
		account(t, c, request(t, sonnet, nil, system(""), blocks(20, "v"))))
}

func TestPromptCacheRefusesBadMarkers(t *testing.T) {
	c, _ := newCache()
	var five []map[string]any
	for range 5 {
		five = append(five, blk("w", "default"))
	}
	_, err := c.Account(request(t, sonnet, nil, five, msg("user", blk("x", ""))))
	require.ErrorContains(t, err, "maximum of 4 blocks with cache_control")
	bad := blk("w", "")
	bad["cache_control"] = map[string]any{"type": "ephemeral", "ttl": "10m"}
	_, err = c.Account(request(t, sonnet, nil, []map[string]any{bad}, msg("user", blk("x", ""))))
	require.ErrorContains(t, err, "system.0")
	require.ErrorContains(t, err, "ttl")
}
