package web

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/governance"
	"github.com/nanobot-durable/nanobot/memory/gitstore"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/tokens"
)

// contextView is a session's context meter: what its history costs against
// the budget consolidation holds it to, and what compaction does next.
type contextView struct {
	Model     string `json:"model"`
	Encoding  string `json:"encoding"`
	Used      int    `json:"used"`
	Budget    int    `json:"budget"`
	Window    int    `json:"window"`
	MaxTokens int    `json:"max_tokens"`
	// Target is where consolidation brings the prompt back down to.
	Target int    `json:"target"`
	Next   string `json:"next"`
	Idle   string `json:"idle,omitempty"`
}

// showContext measures a session as /status and COMPACT do (governance.HistoryTokens
// against governance.InputBudget, with the session's /model choice).
func (c *Channel) showContext(w http.ResponseWriter, r *http.Request) {
	key, ok := sessionParam(w, r)
	if !ok {
		return
	}
	sess, err := c.store.Load(r.Context(), key)
	if err != nil {
		c.log.Error("reading a session for its context failed", "session", key, "error", err)
		writeError(w, http.StatusInternalServerError, "could not read the conversation: "+err.Error())
		return
	}
	s := c.cfg.TurnSettings()
	if p, ok := providers.PresetFor(c.cfg, sess.ModelPreset()); ok {
		s.Model, s.MaxTokens, s.ContextWindowTokens = p.Model, cmp.Or(p.MaxTokens, s.MaxTokens), cmp.Or(p.ContextWindowTokens, s.ContextWindowTokens)
	}
	count := tokens.For(s.Model)
	v := contextView{
		Model: s.Model, Encoding: count.Encoding(), Used: governance.HistoryTokens(sess, count.Message),
		Budget: governance.InputBudget(s.ContextWindowTokens, s.MaxTokens), Window: s.ContextWindowTokens, MaxTokens: s.MaxTokens,
	}
	v.Target = int(float64(v.Budget) * s.ConsolidationRatio)
	v.Next = fmt.Sprintf("at %s tokens a turn first archives the oldest turns into memory, down to about %s", protocol.CompactTokens(v.Budget), protocol.CompactTokens(v.Target))
	if v.Used >= v.Budget {
		v.Next = fmt.Sprintf("over the budget: the next turn first archives the oldest turns into memory, down to about %s tokens", protocol.CompactTokens(v.Target))
	}
	if idle := c.cfg.Agents.Defaults.IdleCompactAfterMinutes; idle > 0 {
		n := len(sess.Unarchived())
		v.Idle = fmt.Sprintf("%d messages since the last archive: nothing for idle compaction (it keeps the last %d)", n, protocol.IdleKeepMessages)
		if n > protocol.IdleKeepMessages {
			v.Idle = fmt.Sprintf("after %d min idle, compaction archives all but the last %d of the %d messages since the last archive", idle, protocol.IdleKeepMessages, n)
		}
	}
	writeJSON(w, http.StatusOK, v)
}

// memoryFiles are the files the agent keeps about itself and its user, shown read-only.
var memoryFiles = []struct{ name, path string }{
	{"MEMORY.md", "memory/MEMORY.md"}, {"USER.md", "USER.md"}, {"SOUL.md", "SOUL.md"},
}

// memoryFileView is one memory file (Missing: not written yet).
type memoryFileView struct {
	Name    string `json:"name"`
	Text    string `json:"text"`
	Missing bool   `json:"missing,omitempty"`
}

// dreamView is Dream's last change, as /dream-log shows it.
type dreamView struct {
	Commit string   `json:"commit"`
	When   string   `json:"when"`
	Files  []string `json:"files"`
	Diff   string   `json:"diff"`
}

// showMemory answers the memory files and Dream's last change.
func (c *Channel) showMemory(w http.ResponseWriter, r *http.Request) {
	files := make([]memoryFileView, 0, len(memoryFiles))
	for _, f := range memoryFiles {
		b, err := os.ReadFile(filepath.Join(c.workspace, filepath.FromSlash(f.path)))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.log.Error("reading a memory file failed", "file", f.path, "error", err)
			writeError(w, http.StatusInternalServerError, fmt.Sprintf("could not read %s: %v", f.name, err))
			return
		}
		files = append(files, memoryFileView{Name: f.name, Text: string(b), Missing: err != nil})
	}
	dream, err := c.lastDream()
	if err != nil {
		c.log.Error("reading Dream's last change failed", "error", err)
		writeError(w, http.StatusInternalServerError, "could not read Dream's last change: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": files, "dream": dream})
}

// lastDream is Dream's newest commit with its diff (nil: Dream has not changed anything yet).
func (c *Channel) lastDream() (*dreamView, error) {
	if _, err := os.Stat(gitstore.Dir(c.workspace)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no repository yet: Open would create one, and a page only reads
	}
	repo, err := gitstore.Open(c.workspace)
	if err != nil {
		return nil, err
	}
	dreams, err := repo.Dreams(1)
	if err != nil || len(dreams) == 0 {
		return nil, err
	}
	ch, err := repo.Change(dreams[0].Hash)
	if err != nil {
		return nil, err
	}
	return &dreamView{Commit: ch.Short(), When: ch.When.Format("2006-01-02 15:04"), Files: ch.Files, Diff: chat.Preview(ch.Diff, dreamDiffChars)}, nil
}

// dreamDiffChars bounds the diff a page is sent.
const dreamDiffChars = 64 << 10
