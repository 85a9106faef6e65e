package channels

import (
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/nanobot-durable/nanobot/atomicfile"
)

// SeenKeys is a dedupe set: a RecentKeys in one process (in memory or kept
// in a file), or a set in a database that every gateway shares (pgstore).
type SeenKeys interface {
	// Has reports whether key was recorded.
	Has(key string) bool
	// Add records the keys ("" ones skipped) and reports whether any was already there.
	Add(keys ...string) (dup bool)
	// Claim takes key before its message is handed over: false when it was
	// handled (or claimed) already. A shared set records it now, since two
	// gateways may get one event at the same moment; a set of one process
	// only checks, and Done records it after the hand-over, so a crash in
	// between takes the event in again instead of never.
	Claim(key string) bool
	// Done records a claimed key whose message was handed over.
	Done(key string)
	// Forget drops a key claimed (or added) for a message that could not be
	// handed over, so its redelivery is taken in.
	Forget(key string)
}

var _ SeenKeys = (*RecentKeys)(nil)

// Logger is the channel's logger: the gateway's (slog's default without
// one), each line naming the channel.
func (d Deps) Logger(channel string) *slog.Logger {
	log := d.Log
	if log == nil {
		log = slog.Default()
	}
	return log.With("channel", channel)
}

// StateFile is a file of a channel's state under the home
// (<home>/channels/name); "" when there is no home to keep it in.
func (d Deps) StateFile(name string) string {
	if d.Home == "" {
		return ""
	}
	return filepath.Join(d.Home, "channels", name)
}

// SeenSet is the dedupe set a channel takes its inbound events through: the
// set named name that every gateway on the database shares when Seen is
// set, else one kept in file (the channel's own file under the home), else
// one in memory. n bounds it; name stays stable, so deployed keys are kept.
func (d Deps) SeenSet(name string, n int, file string) SeenKeys {
	switch {
	case d.Seen != nil:
		return d.Seen(name, n)
	case file != "":
		log := d.Log
		if log == nil {
			log = slog.Default()
		}
		return LoadRecentKeys(n, file, log.With("set", name))
	default:
		return NewRecentKeys(n)
	}
}

// RecentKeys remembers the last n keys (update ids, event ids, chat+ts) so
// a platform's redelivery is taken in once. The oldest key is forgotten
// first: platforms redeliver within minutes, not after thousands of newer
// events. Keys are remembered, not a high-water mark, because ids are not
// always increasing (Telegram's jump after a week of silence).
type RecentKeys struct {
	mu    sync.Mutex
	n     int
	keys  map[string]struct{}
	order []string // a ring once full
	next  int
	// path keeps the set across restarts ("" = memory only).
	path string
	log  *slog.Logger
}

// NewRecentKeys is a set of at most n keys held in memory.
func NewRecentKeys(n int) *RecentKeys {
	return &RecentKeys{n: max(n, 1), keys: make(map[string]struct{}, n)}
}

// LoadRecentKeys is a set kept in a file: keys handled before a restart
// stay handled. An unreadable file starts an empty set, and says so.
func LoadRecentKeys(n int, path string, log *slog.Logger) *RecentKeys {
	r := NewRecentKeys(n)
	r.path, r.log = path, log
	data, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			r.warn("cannot read the handled keys; starting afresh", err)
		}
		return r
	}
	// An older build kept Telegram update ids as numbers: read both.
	var keys []json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		r.warn("the handled keys file is broken; starting afresh", err)
		return r
	}
	for _, raw := range keys {
		var k string
		if json.Unmarshal(raw, &k) != nil {
			k = string(raw)
		}
		r.add(k)
	}
	return r
}

// Has reports whether key was recorded.
func (r *RecentKeys) Has(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.keys[key]
	return ok
}

// Add records the keys ("" ones are skipped), saves the set if it is kept
// in a file, and reports whether any of them was already there.
func (r *RecentKeys) Add(keys ...string) (dup bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	added := false
	for _, k := range keys {
		if k == "" {
			continue
		}
		if !r.add(k) {
			dup = true
			continue
		}
		added = true
	}
	if added && r.path != "" {
		r.save()
	}
	return dup
}

// Claim checks key: one process has no other gateway to race, so Done records it.
func (r *RecentKeys) Claim(key string) bool { return key != "" && !r.Has(key) }

// Done records key once its message was handed over.
func (r *RecentKeys) Done(key string) { r.Add(key) }

// Forget drops key (saving the set if it is kept in a file).
func (r *RecentKeys) Forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.keys[key]; !ok {
		return
	}
	delete(r.keys, key)
	// Oldest first without the key: the ring fills up again from there.
	kept := make([]string, 0, len(r.order))
	for _, k := range append(append([]string{}, r.order[r.next:]...), r.order[:r.next]...) {
		if k != key {
			kept = append(kept, k)
		}
	}
	r.order, r.next = kept, 0
	if r.path != "" {
		r.save()
	}
}

func (r *RecentKeys) add(k string) bool {
	if _, ok := r.keys[k]; ok {
		return false
	}
	r.keys[k] = struct{}{}
	if len(r.order) < r.n {
		r.order = append(r.order, k)
		return true
	}
	delete(r.keys, r.order[r.next])
	r.order[r.next] = k
	r.next = (r.next + 1) % r.n
	return true
}

// save writes the keys oldest first, so a reload keeps the same ones.
func (r *RecentKeys) save() {
	ordered := append(append([]string{}, r.order[r.next:]...), r.order[:r.next]...)
	data, _ := json.Marshal(ordered)
	err := os.MkdirAll(filepath.Dir(r.path), 0o700)
	if err == nil {
		err = atomicfile.Write(r.path, data, 0o600)
	}
	if err != nil {
		r.warn("cannot save the handled keys", err)
	}
}

func (r *RecentKeys) warn(msg string, err error) {
	if r.log != nil {
		r.log.Warn(msg, "path", r.path, "error", err)
	}
}
