// Package memory keeps the workspace's long-term memory files: MEMORY.md,
// memory/history.jsonl (the archive of consolidated conversation) and the
// Dream cursor. Writers take a file lock, so two processes sharing one
// workspace never interleave, and replace files atomically, so a killed
// writer leaves the old file or the new one, never half of one.
package memory

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nanobot-durable/nanobot/atomicfile"
	"github.com/nanobot-durable/nanobot/chat"
)

// nanobot's caps.
const (
	MaxHistoryEntries = 1000
	MaxEntryChars     = 64000
	MaxSummaryChars   = 8000
	MaxRawArchive     = 16000
	timestampLayout   = "2006-01-02 15:04"
)

// Entry is one line of memory/history.jsonl.
type Entry struct {
	Cursor     int    `json:"cursor"`
	Timestamp  string `json:"timestamp"`
	Content    string `json:"content"`
	SessionKey string `json:"session_key,omitempty"`
	// ID makes an append idempotent: a retried consolidation finds its
	// entry instead of archiving twice. nanobot ignores the key.
	ID string `json:"id,omitempty"`
}

var mu sync.Mutex

// Dir is the workspace's memory folder.
func Dir(workspace string) string { return filepath.Join(workspace, "memory") }

// MemoryPath is memory/MEMORY.md, the long-term facts.
func MemoryPath(workspace string) string { return filepath.Join(Dir(workspace), "MEMORY.md") }

// HistoryPath is memory/history.jsonl of a workspace.
func HistoryPath(workspace string) string { return filepath.Join(Dir(workspace), "history.jsonl") }

// CursorPath is memory/.dream_cursor: the last history cursor Dream absorbed.
func CursorPath(workspace string) string { return filepath.Join(Dir(workspace), ".dream_cursor") }

// locked runs fn holding the process mutex and an flock on the memory
// folder, so other processes sharing the workspace wait their turn.
func locked(workspace string, fn func() error) error {
	mu.Lock()
	defer mu.Unlock()
	if err := os.MkdirAll(Dir(workspace), 0o755); err != nil {
		return fmt.Errorf("create memory dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(Dir(workspace), ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("open memory lock: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock memory: %w", err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it too
	return fn()
}

// Append adds an entry with the next cursor, keeping the newest 1000. An
// entry whose ID is already there is returned as stored, not added again.
func Append(workspace string, e Entry) (Entry, error) {
	var out Entry
	err := locked(workspace, func() error {
		path := HistoryPath(workspace)
		entries, err := read(path)
		if err != nil {
			return err
		}
		if e.ID != "" {
			for _, x := range entries {
				if x.ID == e.ID {
					out = x
					return nil
				}
			}
		}
		e.Cursor = 1
		if n := len(entries); n > 0 {
			e.Cursor = entries[n-1].Cursor + 1
		} else if c, err := readCursor(workspace); err == nil && c > 0 {
			e.Cursor = c + 1 // a trimmed or emptied file never reuses a cursor Dream saw
		}
		e = Stamp(e)
		entries = append(entries, e)
		if len(entries) > MaxHistoryEntries {
			entries = entries[len(entries)-MaxHistoryEntries:]
		}
		out = e
		return write(path, entries)
	})
	return out, err
}

// Stamp is an entry as the archive stores it: timestamped, its content capped.
func Stamp(e Entry) Entry {
	if e.Timestamp == "" {
		e.Timestamp = time.Now().Format(timestampLayout)
	}
	e.Content = chat.Cut(e.Content, MaxEntryChars)
	return e
}

func write(path string, entries []Entry) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, x := range entries {
		if err := enc.Encode(x); err != nil {
			return err
		}
	}
	return atomicfile.Write(path, buf.Bytes(), 0o644)
}

// Read returns the entries of memory/history.jsonl; unreadable lines are skipped.
func Read(workspace string) ([]Entry, error) {
	mu.Lock()
	defer mu.Unlock()
	return read(HistoryPath(workspace))
}

// Find returns the entry with the given ID.
func Find(workspace, id string) (Entry, bool, error) {
	entries, err := Read(workspace)
	if err != nil {
		return Entry{}, false, err
	}
	for _, e := range entries {
		if e.ID == id {
			return e, true, nil
		}
	}
	return Entry{}, false, nil
}

func read(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 8*1024*1024)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Cursor > 0 {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// RawArchive is nanobot's fallback archive of messages: "[RAW] N messages"
// and the transcript, capped at 16 000 chars.
func RawArchive(msgs []chat.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[RAW] %d messages", len(msgs))
	for _, m := range msgs {
		text := m.Content
		if text == "" && len(m.ToolCalls) > 0 {
			names := make([]string, 0, len(m.ToolCalls))
			for _, c := range m.ToolCalls {
				names = append(names, c.Function.Name)
			}
			text = "(called " + strings.Join(names, ", ") + ")"
		}
		fmt.Fprintf(&b, "\n%s: %s", strings.ToUpper(m.Role), text)
	}
	return chat.Cut(b.String(), MaxRawArchive)
}
