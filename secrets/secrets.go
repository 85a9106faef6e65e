// Package secrets finds the keys and tokens a nanobot config holds (and the
// environment variables that stand in for them) and blanks them out of text
// that leaves the worker: workflow payloads, summaries, errors and logs.
package secrets

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Mask replaces a secret.
const Mask = "[redacted]"

// minLen keeps short values ("none", "x") from blanking ordinary words.
const minLen = 8

// secretWords are what a name holding a secret contains, in any case. A
// substring search, not a case-folding regexp: every process walks its
// whole config with it at start, and the regexp took a millisecond.
var secretWords = []string{"key", "token", "secret", "password", "passwd", "auth", "credential", "bearer"}

// SecretName reports a name that looks like it holds a secret (an API key, a token, a password).
func SecretName(name string) bool {
	lower := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// Set is a list of secret values, longest first (so a key containing another is masked whole).
type Set struct {
	mu     sync.RWMutex
	values []string
}

// FromConfig collects every string under a secret-looking name in the config
// (any JSON-encodable value), and the same from environ ("NAME=value").
func FromConfig(cfg any, environ []string) *Set {
	found := map[string]bool{}
	if data, err := json.Marshal(cfg); err == nil {
		var tree any
		if json.Unmarshal(data, &tree) == nil {
			walk(tree, false, found)
		}
	}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && SecretName(k) {
			add(v, found)
		}
	}
	s := &Set{}
	for v := range found {
		s.values = append(s.values, v)
	}
	s.sort()
	return s
}

// Add masks values learnt at run time too (an access token a channel fetched).
func (s *Set) Add(values ...string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) >= minLen && !slices.Contains(s.values, v) {
			s.values = append(s.values, v)
		}
	}
	s.sort()
}

func (s *Set) sort() {
	sort.Slice(s.values, func(i, j int) bool {
		if len(s.values[i]) != len(s.values[j]) {
			return len(s.values[i]) > len(s.values[j])
		}
		return s.values[i] < s.values[j]
	})
}

// FromEnv is FromConfig over the process environment.
func FromEnv(cfg any) *Set { return FromConfig(cfg, os.Environ()) }

func walk(v any, secret bool, found map[string]bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			walk(child, secret || SecretName(k), found)
		}
	case []any:
		for _, child := range t {
			walk(child, secret, found)
		}
	case string:
		if secret {
			add(t, found)
		}
	}
}

func add(v string, found map[string]bool) {
	v = strings.TrimSpace(v)
	if len(v) >= minLen {
		found[v] = true
	}
	if _, tok, ok := strings.Cut(v, " "); ok && strings.HasPrefix(strings.ToLower(v), "bearer ") { // the token travels without its scheme too
		add(tok, found)
	}
}

// process holds the secrets a process holds outside any config (the owner
// key): every set masks them too, including sets made before they were known.
var process Set

// Register masks values in every set of this process from now on.
func Register(values ...string) { process.Add(values...) }

// Redact masks every secret in s, and the process's registered ones.
func (s *Set) Redact(text string) string {
	if s != nil && s != &process {
		text = s.redact(text)
	}
	return process.redact(text)
}

func (s *Set) redact(text string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, v := range s.values {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, Mask)
		}
	}
	return text
}

// Len is how many secrets the set holds.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.values)
}
