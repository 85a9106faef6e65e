package matrix

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/nanobot-durable/nanobot/atomicfile"
)

// The channel's files under <nanobot home>/channels: what a restart needs.
const (
	sessionFile = "matrix-session.json" // a password login's session
	stateFile   = "matrix-state.json"   // the next_batch to sync from, per account (without a database)
	syncFile    = "matrix-sync.json"    // where earlier builds kept it: read when the state has none
	eventsFile  = "matrix-events.json"  // the event ids already handed over
)

// statePath is one of the channel's files ("" when nothing is kept).
func (c *Channel) statePath(name string) string {
	if c.stateDir == "" {
		return ""
	}
	return filepath.Join(c.stateDir, name)
}

// loadState reads one of the channel's files into v; a missing file is
// false, an unreadable or broken one is false and says so.
func (c *Channel) loadState(name string, v any) bool {
	path := c.statePath(name)
	if path == "" {
		return false
	}
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		c.Log.Warn("matrix state file unreadable; starting without it", "path", path, "error", err)
	}
	return err == nil
}

// saveState writes one of the channel's files atomically, private to the user.
func (c *Channel) saveState(name string, v any) {
	path := c.statePath(name)
	if path == "" {
		return
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o700)
	}
	if err == nil {
		err = atomicfile.Write(path, data, 0o600)
	}
	if err != nil {
		c.Log.Warn("matrix state file not saved: a restart will not have it", "path", path, "error", err)
	}
}
