package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/heartbeat"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// HeartbeatFile is the workspace file whose "## Active Tasks" the heartbeat works through.
const HeartbeatFile = "HEARTBEAT.md"

// HeartbeatTasks reads the active tasks of HEARTBEAT.md; a missing file has none.
func (a *Activities) HeartbeatTasks(_ context.Context, _ protocol.HeartbeatInput) (protocol.HeartbeatTasks, error) {
	data, err := os.ReadFile(filepath.Join(a.Workspace, HeartbeatFile))
	if errors.Is(err, fs.ErrNotExist) {
		return protocol.HeartbeatTasks{}, nil
	}
	if err != nil {
		return protocol.HeartbeatTasks{}, fmt.Errorf("read %s: %w", HeartbeatFile, err)
	}
	tasks := heartbeat.ActiveTasks(string(data))
	return protocol.HeartbeatTasks{Tasks: chat.Preview(tasks, protocol.PreviewBytes), Chars: len(tasks)}, nil
}

// HeartbeatTrim keeps the last in.Keep messages of the heartbeat session,
// moved back to a user message so the kept part replays on its own
// (nanobot's retain_recent_legal_suffix). It returns how many remain.
func (a *Activities) HeartbeatTrim(ctx context.Context, in protocol.HeartbeatTrimInput) (int, error) {
	kept := 0
	err := a.Store.Update(ctx, in.SessionKey, func(s *session.Session) error {
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
func (a *Activities) heartbeatTarget() (*protocol.Route, error) {
	lister, ok := a.Store.(session.Lister)
	if !ok {
		return nil, errors.New("the session store cannot list sessions")
	}
	all, err := lister.Sessions()
	if err != nil {
		return nil, err
	}
	enabled := enabledChannels(a.currentConfig())
	sort.Slice(all, func(i, j int) bool { return all[i].Modified.After(all[j].Modified) })
	for _, s := range all {
		channel, chatID, err := protocol.SplitSessionKey(s.Key)
		if err != nil || !enabled[channel] {
			continue
		}
		return &protocol.Route{Channel: channel, ChatID: chatID}, nil
	}
	return nil, nil
}

// enabledChannels are the chat channels a gateway runs with this config.
func enabledChannels(cfg *config.Config) map[string]bool {
	if cfg == nil {
		return nil
	}
	return map[string]bool{
		"telegram": cfg.Channels.Telegram.Enabled,
		"slack":    cfg.Channels.Slack.Enabled,
		"web":      cfg.Channels.Web.EnabledOr(os.Getenv("TEMPORAL_ADDRESS") == ""),
	}
}

func (a *Activities) currentConfig() *config.Config {
	if a.Config == nil {
		return nil
	}
	return a.Config()
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
