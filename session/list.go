package session

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Info is a stored session as listed, without reading its messages.
type Info struct {
	Key string
	// Modified is when the session file last changed (appends do not touch
	// the metadata line's updated_at).
	Modified time.Time
}

// Lister is a store that can list and remove whole sessions (idle
// compaction and Dream's bookkeeping need it).
type Lister interface {
	Sessions() ([]Info, error)
	// SessionsOfKind lists the sessions whose Session.Kind is kind.
	SessionsOfKind(kind string) ([]Info, error)
	Delete(key string) error
}

// Sessions lists every session file of the store.
func (s *JSONLStore) Sessions() ([]Info, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("list sessions in %s: %w", s.dir, err)
	}
	var out []Info
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() {
			continue
		}
		key, err := base64.RawURLEncoding.DecodeString(name)
		if err != nil {
			continue // not one of ours
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, Info{Key: string(key), Modified: info.ModTime()})
	}
	return out, nil
}

// Delete removes a session with its turn data and lock file.
func (s *JSONLStore) Delete(key string) error {
	unlock, err := s.lock(key)
	if err != nil {
		return err
	}
	defer unlock()
	s.cache.Forget(key)
	for _, p := range []string{s.Path(key), s.turnDir(key)} {
		if err := os.RemoveAll(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete session %s: %w", key, err)
		}
	}
	_ = os.Remove(filepath.Clean(s.Path(key) + ".lock"))
	return nil
}

// SessionsOfKind lists the sessions of one kind, reading only each file's
// metadata line (Sessions reads none).
func (s *JSONLStore) SessionsOfKind(kind string) ([]Info, error) {
	all, err := s.Sessions()
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, info := range all {
		if headerOf(s.Path(info.Key)).Kind == kind {
			out = append(out, info)
		}
	}
	return out, nil
}

// HandleSources are the chat sessions as handles are drawn for them, read
// from each file's metadata line.
func (s *JSONLStore) HandleSources() ([]HandleSource, error) {
	all, err := s.Sessions()
	if err != nil {
		return nil, err
	}
	var out []HandleSource
	for _, info := range all {
		md := headerOf(s.Path(info.Key))
		if md.Kind != "" {
			continue
		}
		stored, _ := md.Metadata[HandleKey].(string)
		out = append(out, HandleSource{Key: info.Key, CreatedAt: parseTime(md.CreatedAt), Stored: stored})
	}
	return out, nil
}

// headerOf reads a session's metadata line (empty when unreadable).
func headerOf(path string) metadataLine {
	f, err := os.Open(path)
	if err != nil {
		return metadataLine{}
	}
	defer f.Close()
	line, _ := bufio.NewReaderSize(f, 64<<10).ReadBytes('\n')
	var md metadataLine
	if json.Unmarshal(line, &md) != nil || md.Type != "metadata" {
		return metadataLine{}
	}
	return md
}
