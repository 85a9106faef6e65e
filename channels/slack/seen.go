package slack

import "sync"

// seenSet remembers the last max keys (event ids, channel+ts) so an event
// Slack redelivers is taken in once. Old keys are forgotten first: Slack
// redelivers within minutes, not after thousands of newer events.
type seenSet struct {
	mu    sync.Mutex
	max   int
	keys  map[string]struct{}
	order []string
	next  int
}

func newSeenSet(max int) *seenSet {
	return &seenSet{max: max, keys: make(map[string]struct{}, max)}
}

// add records the keys ("" ones are skipped) and reports whether any of
// them was already there.
func (s *seenSet) add(keys ...string) (dup bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if k == "" {
			continue
		}
		if _, ok := s.keys[k]; ok {
			dup = true
			continue
		}
		s.keys[k] = struct{}{}
		if len(s.order) < s.max {
			s.order = append(s.order, k)
			continue
		}
		delete(s.keys, s.order[s.next])
		s.order[s.next] = k
		s.next = (s.next + 1) % s.max
	}
	return dup
}

// has reports whether a key is remembered.
func (s *seenSet) has(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.keys[key]
	return ok
}
