package session

import "sync"

// Cache keeps parsed sessions, each with the stamp of the stored form it was read at (a file's
// size and mtime, a row's version): a read whose stamp still matches gets a copy instead of a
// parse, so a turn's many journal reads parse the session once. Safe for concurrent use.
type Cache[S comparable] struct {
	mu    sync.Mutex
	items map[string]*cached[S]
	uses  uint64
}

type cached[S comparable] struct {
	sess  *Session
	stamp S
	used  uint64
}

// cacheSize bounds the parsed sessions kept (nanobot keeps an LRU of 128).
const cacheSize = 128

// NewCache is an empty cache.
func NewCache[S comparable]() *Cache[S] { return &Cache[S]{items: map[string]*cached[S]{}} }

// Has reports whether key has a cached parse (of any stamp).
func (c *Cache[S]) Has(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.items[key]
	return ok
}

// Stamp is the stamp of key's cached parse, if there is one.
func (c *Cache[S]) Stamp(key string) (S, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[key]
	if !ok {
		var zero S
		return zero, false
	}
	return it.stamp, true
}

// Get returns a copy of key's parse when it was read at stamp, else nil.
func (c *Cache[S]) Get(key string, stamp S) *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[key]
	if !ok || it.stamp != stamp {
		return nil
	}
	c.uses++
	it.used = c.uses
	return it.sess.clone()
}

// Put remembers a copy of sess as read at stamp, dropping the least recently used beyond cacheSize.
func (c *Cache[S]) Put(key string, sess *Session, stamp S) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; !ok && len(c.items) >= cacheSize {
		oldest, at := "", uint64(1<<63)
		for k, it := range c.items {
			if it.used < at {
				oldest, at = k, it.used
			}
		}
		delete(c.items, oldest)
	}
	c.uses++
	c.items[key] = &cached[S]{sess: sess.clone(), stamp: stamp, used: c.uses}
}

// Forget drops key's parse.
func (c *Cache[S]) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.items, key)
}
