package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/heartbeat"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// HeartbeatFile is the workspace file whose "## Active Tasks" the heartbeat works through.
const HeartbeatFile = "HEARTBEAT.md"

// Heartbeat is the heartbeat's side of a firing: the tasks of
// HEARTBEAT.md, whether the turn's reply is worth telling, and the
// heartbeat session kept short.
type Heartbeat struct {
	journal
	models    ModelSource
	workspace string
	config    func() *config.Config // the enabled channels, for the chat to tell
	usage     usageLog
	log       *slog.Logger
}

// HeartbeatTasks reads the active tasks of HEARTBEAT.md (a missing file
// has none) and how this firing runs, from the current config.
func (a *Heartbeat) HeartbeatTasks(_ context.Context, _ protocol.HeartbeatInput) (protocol.HeartbeatTasks, error) {
	cfg := currentConfig(a.config)
	hb := cfg.Gateway.Heartbeat
	res := protocol.HeartbeatTasks{Settings: cfg.TurnSettings(), KeepRecentMessages: hb.KeepRecentMessages,
		Interval: time.Duration(hb.IntervalS) * time.Second}
	data, err := os.ReadFile(filepath.Join(a.workspace, HeartbeatFile))
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("read %s: %w", HeartbeatFile, err)
	}
	tasks := heartbeat.ActiveTasks(string(data))
	res.Tasks, res.Chars = chat.Preview(tasks, protocol.PreviewBytes), len(tasks)
	return res, nil
}

// HeartbeatTrim keeps the last in.Keep messages of the heartbeat session,
// moved back to a user message so the kept part replays on its own
// (nanobot's retain_recent_legal_suffix). It returns how many remain.
func (a *Heartbeat) HeartbeatTrim(ctx context.Context, in protocol.HeartbeatTrimInput) (int, error) {
	kept := 0
	err := a.store.Update(ctx, in.SessionKey, func(s *session.Session) error {
		start := recentUserSuffix(s.Messages, in.Keep)
		s.Messages = s.Messages[start:]
		s.LastConsolidated = max(s.LastConsolidated-start, 0)
		kept = len(s.Messages)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("trim session %s: %w", in.SessionKey, err)
	}
	return kept, nil
}

// recentUserSuffix is where the last keep messages start, moved back to the
// nearest user message; keep <= 0 drops everything.
func recentUserSuffix(msgs []chat.Message, keep int) int {
	if keep <= 0 {
		return len(msgs)
	}
	start := max(len(msgs)-keep, 0)
	for start > 0 && msgs[start].Role != chat.RoleUser {
		start--
	}
	return start
}

// heartbeatTarget is the chat a heartbeat notification goes to: the most
// recently active session on a channel the config enables (nanobot's
// _pick_heartbeat_target); the CLI, the API and internal sessions never are.
func (a *Heartbeat) heartbeatTarget() (*protocol.Route, error) {
	lister, ok := a.store.(session.Lister)
	if !ok {
		return nil, errors.New("the session store cannot list sessions")
	}
	all, err := lister.SessionsOfKind("") // chats only: not Dream's, a subagent's or a temporary chat
	if err != nil {
		return nil, err
	}
	enabled := channels.EnabledNames(currentConfig(a.config))
	sort.Slice(all, func(i, j int) bool { return all[i].Modified.After(all[j].Modified) })
	for _, s := range all {
		r, err := sessionRoute(s.Key)
		if err != nil || !slices.Contains(enabled, r.Channel) {
			continue
		}
		return &r, nil
	}
	return nil, nil
}

// heartbeatReply is the last answer the heartbeat turn journaled.
func heartbeatReply(sess *session.Session, turn string) (chat.Message, bool) {
	for i := len(sess.Messages) - 1; i >= 0; i-- {
		m := sess.Messages[i]
		if m.Turn == turn && m.Role == chat.RoleAssistant && len(m.ToolCalls) == 0 && strings.TrimSpace(m.Content) != "" {
			return m, true
		}
	}
	return chat.Message{}, false
}
