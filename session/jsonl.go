package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/nanobot-durable/nanobot/atomicfile"
	"github.com/nanobot-durable/nanobot/chat"
)

// TimeLayout is the timestamp form nanobot writes (Python isoformat).
const TimeLayout = "2006-01-02T15:04:05.000000"

// JSONLStore keeps each session in <dir>/<base64url(key)>.jsonl. Parsed
// sessions are cached and checked against the file's size and mtime, so a
// turn's many journal reads parse the file once; appends add lines instead
// of rewriting the file.
type JSONLStore struct {
	dir   string
	mu    sync.Mutex
	locks map[string]*sync.Mutex
	cache *Cache[fileStamp]
	log   *slog.Logger
}

// fileStamp is the stat a session file was parsed at.
type fileStamp struct{ size, mtime int64 }

func stampOf(st os.FileInfo) fileStamp { return fileStamp{st.Size(), st.ModTime().UnixNano()} }

// NewJSONLStore opens (and creates) a session directory.
func NewJSONLStore(dir string, log *slog.Logger) (*JSONLStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create session dir %s: %w", dir, err)
	}
	if log == nil {
		log = slog.Default()
	}
	return &JSONLStore{dir: dir, locks: map[string]*sync.Mutex{}, cache: NewCache[fileStamp](), log: log}, nil
}

// Path returns the JSONL file of a session.
func (s *JSONLStore) Path(key string) string {
	return filepath.Join(s.dir, base64.RawURLEncoding.EncodeToString([]byte(key))+".jsonl")
}

func (s *JSONLStore) turnDir(key string) string {
	return filepath.Join(s.dir, base64.RawURLEncoding.EncodeToString([]byte(key))+".turns")
}

// lock serializes writers of one session: a mutex inside the process and an
// flock across worker processes on the same host.
func (s *JSONLStore) lock(key string) (func(), error) {
	s.mu.Lock()
	m, ok := s.locks[key]
	if !ok {
		m = &sync.Mutex{}
		s.locks[key] = m
	}
	s.mu.Unlock()
	m.Lock()
	f, err := os.OpenFile(s.Path(key)+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		m.Unlock()
		return nil, fmt.Errorf("open lock for session %s: %w", key, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		m.Unlock()
		return nil, fmt.Errorf("lock session %s: %w", key, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
		m.Unlock()
	}, nil
}

// Load reads a session; unreadable lines are skipped and reported.
func (s *JSONLStore) Load(_ context.Context, key string) (*Session, error) {
	return s.read(key)
}

type metadataLine struct {
	Type             string         `json:"_type"`
	Key              string         `json:"key"`
	Kind             string         `json:"kind,omitempty"`
	CreatedAt        string         `json:"created_at"`
	UpdatedAt        string         `json:"updated_at"`
	Metadata         map[string]any `json:"metadata"`
	LastConsolidated int            `json:"last_consolidated"`
}

func (s *JSONLStore) read(key string) (*Session, error) {
	st, err := os.Stat(s.Path(key))
	if err == nil {
		if c := s.cache.Get(key, stampOf(st)); c != nil {
			return c, nil
		}
	}
	sess, err := s.parse(key)
	if err != nil || st == nil {
		return sess, err
	}
	if st2, err := os.Stat(s.Path(key)); err == nil && stampOf(st2) == stampOf(st) {
		s.cache.Put(key, sess, stampOf(st2))
	}
	return sess.clone(), nil
}

// clone copies what callers may change: the message list and the metadata.
func (sess *Session) clone() *Session {
	c := *sess
	c.Messages = append([]chat.Message(nil), sess.Messages...)
	c.Problems = append([]string(nil), sess.Problems...)
	c.Metadata = copyMetadata(sess.Metadata)
	return &c
}

// parse reads and decodes the file; unreadable lines are skipped and reported.
func (s *JSONLStore) parse(key string) (*Session, error) {
	sess := &Session{Key: key, Metadata: map[string]any{}}
	data, err := os.ReadFile(s.Path(key))
	if errors.Is(err, os.ErrNotExist) {
		return sess, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", key, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 256*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var probe struct {
			Type string `json:"_type"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			sess.Problems = append(sess.Problems, fmt.Sprintf("line %d: %v", line, err))
			continue
		}
		switch probe.Type {
		case "metadata":
			var md metadataLine
			if err := json.Unmarshal(raw, &md); err != nil {
				sess.Problems = append(sess.Problems, fmt.Sprintf("line %d (metadata): %v", line, err))
				continue
			}
			sess.CreatedAt = parseTime(md.CreatedAt)
			sess.UpdatedAt = parseTime(md.UpdatedAt)
			if md.Metadata != nil {
				sess.Metadata = md.Metadata
			}
			sess.LastConsolidated = md.LastConsolidated
			sess.Kind = md.Kind
		case "":
			m, err := DecodeMessage(raw)
			if err != nil {
				sess.Problems = append(sess.Problems, fmt.Sprintf("line %d: %v", line, err))
				continue
			}
			sess.Messages = append(sess.Messages, m)
		default:
			// Other typed lines (nanobot's provider_state) are not messages.
		}
	}
	if err := sc.Err(); err != nil {
		sess.Problems = append(sess.Problems, fmt.Sprintf("after line %d: %v", line, err))
	}
	for _, p := range sess.Problems {
		s.log.Warn("skipped unreadable session line", "session", key, "file", s.Path(key), "problem", p)
	}
	if sess.LastConsolidated > len(sess.Messages) {
		sess.LastConsolidated = len(sess.Messages)
	}
	return sess, nil
}

// MessageTime reads a message's timestamp; nanobot's naive ones are the
// writing host's local time.
func MessageTime(v string) (time.Time, bool) {
	for _, layout := range []string{TimeLayout, "2006-01-02T15:04:05", time.RFC3339Nano} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func parseTime(v string) time.Time {
	for _, layout := range []string{TimeLayout, "2006-01-02T15:04:05", time.RFC3339Nano} {
		if t, err := time.Parse(layout, v); err == nil {
			return t
		}
	}
	return time.Time{}
}

// write replaces the file atomically: temp file, fsync, rename.
func (s *JSONLStore) write(sess *Session) error {
	now := time.Now()
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = now
	}
	sess.UpdatedAt = now
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	md := metadataLine{
		Type: "metadata", Key: sess.Key, Kind: sess.Kind,
		CreatedAt: sess.CreatedAt.Format(TimeLayout), UpdatedAt: sess.UpdatedAt.Format(TimeLayout),
		Metadata: sess.Metadata, LastConsolidated: sess.LastConsolidated,
	}
	if md.Metadata == nil {
		md.Metadata = map[string]any{}
	}
	if err := enc.Encode(md); err != nil {
		return fmt.Errorf("encode metadata of session %s: %w", sess.Key, err)
	}
	for i, m := range sess.Messages {
		if err := enc.Encode(m); err != nil {
			return fmt.Errorf("encode message %d of session %s: %w", i, sess.Key, err)
		}
	}
	if err := writeAtomic(s.Path(sess.Key), buf.Bytes()); err != nil {
		return err
	}
	sess.Problems = nil
	if st, err := os.Stat(s.Path(sess.Key)); err == nil {
		s.cache.Put(sess.Key, sess, stampOf(st))
	}
	return nil
}

func writeAtomic(path string, data []byte) error { return atomicfile.Write(path, data, 0o600) }

// Append journals messages idempotently by (Turn, EntryID). New lines are
// appended and fsynced; the file is rewritten only when it is new or its
// last line is torn (a crash mid-append), which the rewrite repairs.
func (s *JSONLStore) Append(_ context.Context, key string, msgs ...chat.Message) (int, error) {
	unlock, err := s.lock(key)
	if err != nil {
		return 0, err
	}
	defer unlock()
	sess, err := s.read(key)
	if err != nil {
		return 0, err
	}
	var fresh []chat.Message
	for _, m := range msgs {
		if m.EntryID != "" && (sess.Find(m.Turn, m.EntryID) >= 0 || findIn(fresh, m.Turn, m.EntryID)) {
			continue
		}
		if m.Timestamp == "" {
			m.Timestamp = time.Now().Format(TimeLayout)
		}
		fresh = append(fresh, m)
	}
	if len(fresh) == 0 {
		return 0, nil
	}
	sess.Messages = append(sess.Messages, fresh...)
	if len(sess.Problems) > 0 || !endsWithNewline(s.Path(key)) {
		return len(fresh), s.write(sess)
	}
	if err := s.appendLines(key, fresh); err != nil {
		return 0, err
	}
	if st, err := os.Stat(s.Path(key)); err == nil {
		s.cache.Put(key, sess, stampOf(st))
	}
	return len(fresh), nil
}

func findIn(msgs []chat.Message, turn, id string) bool {
	for _, m := range msgs {
		if m.Turn == turn && m.EntryID == id {
			return true
		}
	}
	return false
}

// endsWithNewline tells whether the file exists and its last line is whole.
func endsWithNewline(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return false
	}
	b := make([]byte, 1)
	_, err = f.ReadAt(b, st.Size()-1)
	return err == nil && b[0] == '\n'
}

func (s *JSONLStore) appendLines(key string, msgs []chat.Message) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, m := range msgs {
		if err := enc.Encode(m); err != nil {
			return fmt.Errorf("encode message of session %s: %w", key, err)
		}
	}
	f, err := os.OpenFile(s.Path(key), os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("open session %s for append: %w", key, err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("append to session %s: %w", key, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync session %s: %w", key, err)
	}
	return f.Close()
}

// Update is an atomic read-modify-write of one session.
func (s *JSONLStore) Update(_ context.Context, key string, fn func(*Session) error) error {
	unlock, err := s.lock(key)
	if err != nil {
		return err
	}
	defer unlock()
	sess, err := s.read(key)
	if err != nil {
		return err
	}
	if err := fn(sess); err != nil {
		return err
	}
	return s.write(sess)
}

// Claim appends a claim line to the session's claim file, fsynced, once.
func (s *JSONLStore) Claim(_ context.Context, key, turn, entryID string) (bool, error) {
	unlock, err := s.lock(key)
	if err != nil {
		return false, err
	}
	defer unlock()
	path := filepath.Join(s.turnDir(key), "claims.jsonl")
	want := claimLine{Turn: turn, EntryID: entryID}
	if data, err := os.ReadFile(path); err == nil {
		for _, raw := range bytes.Split(data, []byte("\n")) {
			var c claimLine
			if json.Unmarshal(raw, &c) == nil && c.Turn == turn && c.EntryID == entryID {
				return false, nil
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, fmt.Errorf("create claim dir for session %s: %w", key, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return false, fmt.Errorf("open claims of session %s: %w", key, err)
	}
	defer f.Close()
	want.At = time.Now().Format(TimeLayout)
	line, _ := json.Marshal(want)
	if _, err := f.Write(append(line, '\n')); err != nil {
		return false, fmt.Errorf("write claim %s/%s of session %s: %w", turn, entryID, key, err)
	}
	if err := f.Sync(); err != nil {
		return false, fmt.Errorf("sync claims of session %s: %w", key, err)
	}
	return true, nil
}

type claimLine struct {
	Turn    string `json:"turn"`
	EntryID string `json:"id"`
	At      string `json:"at"`
}

// PutTurnData stores a per-turn blob atomically.
func (s *JSONLStore) PutTurnData(_ context.Context, key, turn, name string, data []byte) error {
	dir := filepath.Join(s.turnDir(key), safeName(turn))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create turn dir for session %s: %w", key, err)
	}
	// Not synced: turn data is rebuilt (transcripts) or reported missing (the
	// system prompt) after a machine crash; the journal is what must survive one.
	if err := atomicfile.WriteUnsynced(filepath.Join(dir, safeName(name)), data, 0o600); err != nil {
		return err
	}
	// The kernel stamps directories with a coarse clock (a few ms): PruneTurnData's
	// newest-first order needs the precise one.
	now := time.Now()
	return os.Chtimes(dir, now, now)
}

// AddTurnData stores a per-turn blob unless there is one by that name.
func (s *JSONLStore) AddTurnData(ctx context.Context, key, turn, name string, data []byte) error {
	if _, err := os.Stat(filepath.Join(s.turnDir(key), safeName(turn), safeName(name))); err == nil {
		return nil
	}
	return s.PutTurnData(ctx, key, turn, name, data)
}

// TurnData reads a per-turn blob; a missing blob is os.ErrNotExist.
func (s *JSONLStore) TurnData(_ context.Context, key, turn, name string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(s.turnDir(key), safeName(turn), safeName(name)))
	if err != nil {
		return nil, fmt.Errorf("read %s of turn %s in session %s: %w", name, turn, key, err)
	}
	return data, nil
}

func safeName(s string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

// PruneTurnData removes the blobs of all but the newest keep turns.
func (s *JSONLStore) PruneTurnData(_ context.Context, key string, keep int) error {
	entries, err := os.ReadDir(s.turnDir(key))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list turn data of session %s: %w", key, err)
	}
	type dir struct {
		name string
		mod  time.Time
	}
	var dirs []dir
	for _, e := range entries {
		if info, err := e.Info(); err == nil && e.IsDir() {
			dirs = append(dirs, dir{e.Name(), info.ModTime()})
		}
	}
	if len(dirs) <= keep {
		return nil
	}
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].mod.After(dirs[j].mod) })
	for _, d := range dirs[keep:] {
		if err := os.RemoveAll(filepath.Join(s.turnDir(key), d.name)); err != nil {
			return fmt.Errorf("prune turn data of session %s: %w", key, err)
		}
	}
	return nil
}
