// Package memory keeps the workspace's long-term memory files: MEMORY.md
// and memory/history.jsonl, the archive of consolidated conversation.
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
	"time"

	"github.com/nanobot-durable/nanobot/atomicfile"
	"github.com/nanobot-durable/nanobot/chat"
)

// nanobot's caps.
const (
	MaxHistoryEntries = 1000
	MaxEntryChars     = 64000
	MaxRawArchive     = 16000
	timestampLayout   = "2006-01-02 15:04"
)

// Entry is one line of memory/history.jsonl.
type Entry struct {
	Cursor     int    `json:"cursor"`
	Timestamp  string `json:"timestamp"`
	Content    string `json:"content"`
	SessionKey string `json:"session_key,omitempty"`
}

var mu sync.Mutex

// HistoryPath is memory/history.jsonl of a workspace.
func HistoryPath(workspace string) string {
	return filepath.Join(workspace, "memory", "history.jsonl")
}

// Append adds an entry with the next cursor, keeping the newest 1000.
func Append(workspace string, e Entry) (Entry, error) {
	mu.Lock()
	defer mu.Unlock()
	path := HistoryPath(workspace)
	entries, err := read(path)
	if err != nil {
		return Entry{}, err
	}
	e.Cursor = 1
	if n := len(entries); n > 0 {
		e.Cursor = entries[n-1].Cursor + 1
	}
	if e.Timestamp == "" {
		e.Timestamp = time.Now().Format(timestampLayout)
	}
	e.Content = chat.Cut(e.Content, MaxEntryChars)
	entries = append(entries, e)
	if len(entries) > MaxHistoryEntries {
		entries = entries[len(entries)-MaxHistoryEntries:]
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, x := range entries {
		if err := enc.Encode(x); err != nil {
			return Entry{}, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return Entry{}, fmt.Errorf("create memory dir: %w", err)
	}
	if err := atomicfile.Write(path, buf.Bytes(), 0o644); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// Read returns the entries of memory/history.jsonl; unreadable lines are skipped.
func Read(workspace string) ([]Entry, error) {
	mu.Lock()
	defer mu.Unlock()
	return read(HistoryPath(workspace))
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
		if json.Unmarshal(sc.Bytes(), &e) == nil {
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
