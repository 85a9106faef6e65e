package channels

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/nanobot-durable/nanobot/atomicfile"
)

// StateStore keeps a channel's small values across restarts: a sync token,
// per-user context tokens. On the database every gateway of the instance
// reads what another wrote (the last writer wins); on the files it is the
// channel's own file under the home. Values are opaque strings.
type StateStore interface {
	// Get is key's value ("" when none was put).
	Get(key string) (string, error)
	// Put sets key's value.
	Put(key, value string) error
}

// ChannelState is the state store of channel: the one every gateway on the
// database shares when State is set, else one kept in file (under the
// home), else one in memory.
func (d Deps) ChannelState(channel, file string) StateStore {
	if d.State != nil {
		return d.State(channel)
	}
	return OpenFileState(file)
}

// Cursor is where a channel's event stream picks up after a restart (a
// sync token, the id of the last event handed over), kept in its state.
type Cursor struct {
	State StateStore
	Key   string
	Log   *slog.Logger
}

// Load is the position saved last ("" before the first one).
func (c Cursor) Load() (string, error) {
	pos, err := c.State.Get(c.Key)
	if err != nil {
		return "", fmt.Errorf("read the stream position %s: %w", c.Key, err)
	}
	return pos, nil
}

// Save keeps pos. A failure is logged, not returned: the stream goes on,
// and only a restart picks up from the position saved before.
func (c Cursor) Save(pos string) {
	if err := c.State.Put(c.Key, pos); err != nil {
		c.Log.Warn("stream position not saved: a restart picks up from the one saved before", "key", c.Key, "error", err)
	}
}

// FileState is a StateStore in one JSON file of key → value, written whole
// at each Put ("" path: in memory only).
type FileState struct {
	mu   sync.Mutex
	path string
	vals map[string]string // nil until read
}

var _ StateStore = (*FileState)(nil)

// OpenFileState is the state kept in path; the file is read at the first use.
func OpenFileState(path string) *FileState { return &FileState{path: path} }

// load reads the file once; a missing file is empty, a broken one an error
// (nothing is written over it).
func (f *FileState) load() error {
	if f.vals != nil {
		return nil
	}
	vals := map[string]string{}
	if f.path != "" {
		data, err := os.ReadFile(f.path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return fmt.Errorf("channel state %s: %w", f.path, err)
		default:
			if err := json.Unmarshal(data, &vals); err != nil {
				return fmt.Errorf("channel state %s: %w", f.path, err)
			}
		}
	}
	f.vals = vals
	return nil
}

// Get is key's value in the file ("" when none).
func (f *FileState) Get(key string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.load(); err != nil {
		return "", err
	}
	return f.vals[key], nil
}

// Put writes key's value to the file atomically, private to the user.
func (f *FileState) Put(key, value string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.load(); err != nil {
		return err
	}
	if f.vals[key] == value {
		return nil
	}
	f.vals[key] = value
	if f.path == "" {
		return nil
	}
	data, err := json.MarshalIndent(f.vals, "", "  ")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(f.path), 0o700)
	}
	if err == nil {
		err = atomicfile.Write(f.path, data, 0o600)
	}
	if err != nil {
		return fmt.Errorf("channel state %s: %w", f.path, err)
	}
	return nil
}
