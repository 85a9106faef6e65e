package mattermost

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/nanobot-durable/nanobot/chat"
)

// withThreadContext gives the model, the first time the bot is addressed
// in a thread, the thread's last posts before this one, as nanobot does.
func (c *Channel) withThreadContext(ctx context.Context, p post, text, botID string) string {
	if c.threads.Add(p.ChannelID + ":" + p.RootID) {
		return text // given before
	}
	var thread struct {
		Order []string        `json:"order"`
		Posts map[string]post `json:"posts"`
	}
	path := fmt.Sprintf("/posts/%s/thread?perPage=%d", p.RootID, max(1, c.cfg.ThreadContextLimit))
	if err := c.api.Call(ctx, http.MethodGet, path, nil, &thread); err != nil {
		c.Log.Warn("mattermost thread context unavailable", "root_id", p.RootID, "error", err)
		return text
	}
	var lines []string
	for _, id := range thread.Order {
		q := thread.Posts[id]
		if id == p.ID || strings.TrimSpace(q.Message) == "" {
			continue
		}
		label := "<" + q.UserID + ">"
		if q.UserID == botID {
			label = "bot"
		}
		lines = append(lines, "- "+label+": "+chat.Preview(strings.TrimSpace(q.Message), 500))
	}
	if len(lines) == 0 {
		return text
	}
	return "Mattermost thread context before this mention:\n" + strings.Join(lines, "\n") + "\n\nCurrent message:\n" + text
}
