package channels

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Connector is a channel that knows whether it holds its platform's
// connection right now (a WebSocket up, a poll answering).
type Connector interface{ Connected() bool }

// EventClock is a channel that knows when its platform last sent it
// anything (Base: an event, a heartbeat's answer), not only a message.
type EventClock interface{ LastEvent() time.Time }

// State is what `nanobot channels status` shows of a running channel.
type State struct {
	Name string `json:"name"`
	// Connected is nil for a channel that cannot tell (it runs once started).
	Connected *bool     `json:"connected,omitempty"`
	LastEvent time.Time `json:"lastEvent,omitzero"`
}

// States are the running channels of this manager, sorted by name.
func (m *Manager) States() []State {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []State
	for _, c := range m.started {
		s := State{Name: c.Name(), LastEvent: m.lastEvent[c.Name()]}
		if ec, ok := c.(EventClock); ok && ec.LastEvent().After(s.LastEvent) {
			s.LastEvent = ec.LastEvent()
		}
		if cn, ok := c.(Connector); ok {
			up := cn.Connected()
			s.Connected = &up
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NotReady names each channel of want that does not hold its platform now:
// not among the running states (it failed to start, or stopped), or a
// Connector that says it is not connected. A channel that cannot tell
// counts as ready once it runs.
func NotReady(want []string, states []State) []string {
	byName := make(map[string]State, len(states))
	for _, s := range states {
		byName[s.Name] = s
	}
	var out []string
	for _, name := range want {
		s, ok := byName[name]
		switch {
		case !ok:
			out = append(out, name+": not running")
		case s.Connected != nil && !*s.Connected:
			out = append(out, name+": not connected")
		}
	}
	return out
}

// noteEvent records that the platform sent the channel something.
func (m *Manager) noteEvent(channel string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lastEvent == nil {
		m.lastEvent = map[string]time.Time{}
	}
	m.lastEvent[channel] = time.Now().UTC()
}

// ProcessStatus is one gateway's channels, as it last wrote them.
type ProcessStatus struct {
	PID      int       `json:"pid"`
	Host     string    `json:"host"`
	Updated  time.Time `json:"updated"`
	Channels []State   `json:"channels"`
}

// StatusEvery is how often a gateway rewrites its status file; a file older
// than three periods belongs to a gateway that is gone.
const StatusEvery = 5 * time.Second

// StatusDir is where gateways keep their status files under the nanobot home.
func StatusDir(home string) string { return filepath.Join(home, "run") }

// WriteStatus replaces this process's status file (written whole, then renamed).
func WriteStatus(home string, st ProcessStatus) error {
	dir := StatusDir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("status dir: %w", err)
	}
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "gateway-"+strconv.Itoa(st.PID)+".json")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	return os.Rename(tmp, path)
}

// RemoveStatus deletes this process's status file at exit.
func RemoveStatus(home string, pid int) {
	_ = os.Remove(filepath.Join(StatusDir(home), "gateway-"+strconv.Itoa(pid)+".json"))
}

// ReadStatuses are the status files of the gateways still running (fresh
// within three periods); stale files are left for their gateway to replace.
func ReadStatuses(home string, now time.Time) ([]ProcessStatus, error) {
	entries, err := os.ReadDir(StatusDir(home))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read status dir: %w", err)
	}
	var out []ProcessStatus
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "gateway-") || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(StatusDir(home), e.Name()))
		if err != nil {
			continue // removed while we read: that gateway stopped
		}
		var st ProcessStatus
		if json.Unmarshal(data, &st) != nil || now.Sub(st.Updated) > 3*StatusEvery {
			continue
		}
		out = append(out, st)
	}
	return out, nil
}
