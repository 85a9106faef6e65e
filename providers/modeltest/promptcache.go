package modeltest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/tokens"
)

// Anthropic's documented prompt-caching rules, as PromptCache applies them.
const (
	maxBreakpoints = 4  // cache_control blocks a request may carry
	lookbackBlocks = 20 // block positions checked for a hit, from each breakpoint back
	minCacheable   = 1024
	minCacheHaiku  = 2048
	defaultTTL     = 5 * time.Minute
)

// CacheUsage is what a request's prompt cost, in Anthropic's usage fields.
type CacheUsage struct {
	Input      int // input_tokens: after the last breakpoint (all of it without caching)
	CacheRead  int // cache_read_input_tokens: the longest cached prefix
	CacheWrite int // cache_creation_input_tokens: from there to the last breakpoint
	// CacheWrite1h is the part of CacheWrite written with ttl "1h".
	CacheWrite1h int
}

// Total is every prompt token of the request.
func (u CacheUsage) Total() int { return u.Input + u.CacheRead + u.CacheWrite }

// PromptCache keeps the prompt prefixes Anthropic would cache and bills
// requests as its prompt-caching documentation describes: the prompt is the
// tools, then the system blocks, then the messages' blocks, in that order; a
// block with cache_control ends a prefix that is written to the cache (if it
// holds the model's minimum of tokens) and kept for its ttl, refreshed by
// each hit; a request reads the longest live prefix found at most 20 block
// positions back from one of its breakpoints. Tokens are counted with the
// tokens package, so figures are reproducible. Not modelled: tool_choice,
// images and thinking settings invalidating the message cache.
// It is safe for concurrent use.
type PromptCache struct {
	mu      sync.Mutex
	now     func() time.Time
	count   func(model, text string) int
	entries map[[32]byte]cacheEntry
}

type cacheEntry struct {
	expires time.Time
	ttl     time.Duration
}

// NewPromptCache is an empty cache on the wall clock and the tokens counter.
func NewPromptCache() *PromptCache {
	return &PromptCache{
		now:     time.Now,
		count:   func(model, text string) int { return tokens.For(model).Text(text) },
		entries: map[[32]byte]cacheEntry{},
	}
}

// WithClock makes the cache read the time from now (tests move it to expire entries).
func (c *PromptCache) WithClock(now func() time.Time) *PromptCache {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = now
	return c
}

// WithCounter replaces the token counter (tests count by hand).
func (c *PromptCache) WithCounter(count func(model, text string) int) *PromptCache {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count = count
	return c
}

// promptBlock is one content block of the prompt in cache order.
type promptBlock struct {
	identity   []byte // what the cache compares: place, role and the block without cache_control
	tokens     int
	breakpoint bool
	ttl        time.Duration
}

// Account bills a Messages API request body against the cache and updates
// the cache as Anthropic would. An error is a request Anthropic refuses.
func (c *PromptCache) Account(body []byte) (CacheUsage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	model, blocks, err := c.promptBlocks(body)
	if err != nil {
		return CacheUsage{}, err
	}
	keys := make([][32]byte, len(blocks))
	prefix := make([]int, len(blocks)) // tokens up to and including block i
	var bps []int
	h := sha256.Sum256([]byte(model)) // caches are per model
	total := 0
	for i, b := range blocks {
		h = sha256.Sum256(append(h[:], b.identity...))
		keys[i] = h
		total += b.tokens
		prefix[i] = total
		if b.breakpoint {
			bps = append(bps, i)
		}
	}
	if len(bps) > maxBreakpoints {
		return CacheUsage{}, fmt.Errorf("A maximum of %d blocks with cache_control may be provided. Found %d.", maxBreakpoints, len(bps))
	}
	last := -1
	if len(bps) > 0 {
		last = bps[len(bps)-1]
	}
	if last < 0 || prefix[last] < minimumCacheable(model) {
		return CacheUsage{Input: total}, nil // too short to cache: processed without caching
	}
	now := c.now()
	hit := c.longestHit(keys, bps, now)
	u := CacheUsage{Input: total - prefix[last]}
	if hit >= 0 {
		u.CacheRead = prefix[hit]
		e := c.entries[keys[hit]]
		e.expires = now.Add(e.ttl)
		c.entries[keys[hit]] = e
	}
	from := hit // the written part runs from the hit to the last breakpoint
	for _, bp := range bps {
		if bp <= hit {
			continue
		}
		part := prefix[bp]
		if from >= 0 {
			part -= prefix[from]
		}
		u.CacheWrite += part
		if blocks[bp].ttl == time.Hour {
			u.CacheWrite1h += part
		}
		from = bp
		if prefix[bp] >= minimumCacheable(model) {
			c.entries[keys[bp]] = cacheEntry{expires: now.Add(blocks[bp].ttl), ttl: blocks[bp].ttl}
		}
	}
	return u, nil
}

// longestHit is the position of the longest live cached prefix within the
// lookback window of a breakpoint, checked from the last breakpoint back; -1 for none.
func (c *PromptCache) longestHit(keys [][32]byte, bps []int, now time.Time) int {
	for j := len(bps) - 1; j >= 0; j-- {
		for pos := bps[j]; pos >= 0 && pos > bps[j]-lookbackBlocks; pos-- {
			if e, ok := c.entries[keys[pos]]; ok && now.Before(e.expires) {
				return pos
			}
		}
	}
	return -1
}

// minimumCacheable is the shortest prefix a model caches (Haiku's is longer).
func minimumCacheable(model string) int {
	if strings.Contains(strings.ToLower(model), "haiku") {
		return minCacheHaiku
	}
	return minCacheable
}

// promptBlocks lays the request out in cache order: tools, system, messages.
func (c *PromptCache) promptBlocks(body []byte) (string, []promptBlock, error) {
	var req struct {
		Model    string            `json:"model"`
		Tools    []json.RawMessage `json:"tools"`
		System   json.RawMessage   `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return "", nil, fmt.Errorf("decode request: %w", err)
	}
	var out []promptBlock
	add := func(place string, raw json.RawMessage) error {
		b, err := c.block(req.Model, place, raw)
		if err != nil {
			return fmt.Errorf("%s: %w", place, err)
		}
		out = append(out, b)
		return nil
	}
	for i, t := range req.Tools {
		if err := add(fmt.Sprintf("tools.%d", i), t); err != nil {
			return "", nil, err
		}
	}
	system, err := contentBlocks(req.System)
	if err != nil {
		return "", nil, fmt.Errorf("system: %w", err)
	}
	for i, s := range system {
		if err := add(fmt.Sprintf("system.%d", i), s); err != nil {
			return "", nil, err
		}
	}
	for i, m := range req.Messages {
		content, err := contentBlocks(m.Content)
		if err != nil {
			return "", nil, fmt.Errorf("messages.%d.content: %w", i, err)
		}
		for j, b := range content {
			// The message index keeps "two blocks in one message" apart from "one block in each of two".
			if err := add(fmt.Sprintf("messages.%d.%s.%d", i, m.Role, j), b); err != nil {
				return "", nil, err
			}
		}
	}
	return req.Model, out, nil
}

// contentBlocks reads a string or an array of blocks; a string is one text block.
func contentBlocks(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
		return []json.RawMessage{b}, nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, err
	}
	return blocks, nil
}

// block reads one block: its identity is its canonical JSON without
// cache_control (the marker is not content); text blocks count their text,
// others their JSON.
func (c *PromptCache) block(model, place string, raw json.RawMessage) (promptBlock, error) {
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		return promptBlock{}, err
	}
	b := promptBlock{}
	if cc, ok := fields["cache_control"]; ok && cc != nil {
		ttl, err := cacheTTL(cc)
		if err != nil {
			return promptBlock{}, err
		}
		b.breakpoint, b.ttl = true, ttl
		delete(fields, "cache_control")
	}
	canonical, err := json.Marshal(fields) // map keys marshal sorted
	if err != nil {
		return promptBlock{}, err
	}
	place = place[:strings.LastIndexByte(place, '.')] // the block's index is its place in the chain already
	b.identity = append([]byte(place+"\x00"), canonical...)
	if text, ok := fields["text"].(string); ok && fields["type"] == "text" {
		b.tokens = c.count(model, text)
	} else {
		b.tokens = c.count(model, string(canonical))
	}
	return b, nil
}

// cacheTTL reads cache_control: type ephemeral, ttl "5m" (the default) or "1h".
func cacheTTL(cc any) (time.Duration, error) {
	m, ok := cc.(map[string]any)
	if !ok || m["type"] != "ephemeral" {
		return 0, fmt.Errorf("cache_control: type must be \"ephemeral\", got %v", cc)
	}
	switch m["ttl"] {
	case nil, "5m":
		return defaultTTL, nil
	case "1h":
		return time.Hour, nil
	}
	return 0, fmt.Errorf("cache_control.ttl: %v is not \"5m\" or \"1h\"", m["ttl"])
}
