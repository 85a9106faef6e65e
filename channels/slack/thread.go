package slack

import (
	"context"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// withThreadContext gives the model the thread's earlier messages the
// first time the bot is pulled into an existing thread
// (includeThreadContext, threadContextLimit), in nanobot's words.
func (c *Channel) withThreadContext(ctx context.Context, e event, text, botID string) string {
	if !c.cfg.IncludeThreadContext || e.ThreadTS == "" || e.TS == e.ThreadTS {
		return text
	}
	if c.threadsRead.Add(e.Channel + ":" + e.ThreadTS) {
		return text // already given once
	}
	limit := max(1, c.cfg.ThreadContextLimit)
	rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	msgs, _, _, err := c.api.GetConversationRepliesContext(rctx, &slack.GetConversationRepliesParameters{
		ChannelID: e.Channel, Timestamp: e.ThreadTS, Limit: limit,
	})
	if err != nil {
		c.Log.Warn("slack thread context unavailable", "channel", e.Channel, "thread", e.ThreadTS, "error", err)
		return text
	}
	var lines []string
	for _, m := range msgs {
		if m.Timestamp == e.TS || m.SubType != "" {
			continue
		}
		sender := m.User
		if sender == "" {
			sender = m.BotID
		}
		label := "<@" + sender + ">"
		if sender == "" {
			label = "unknown"
		} else if sender == botID {
			label = "bot"
		}
		body := cleanText(m.Text, botID)
		if body == "" {
			continue
		}
		if r := []rune(body); len(r) > 500 {
			body = string(r[:500]) + "…"
		}
		lines = append(lines, "- "+label+": "+body)
	}
	if len(lines) == 0 {
		return text
	}
	return "Slack thread context before this mention:\n" + strings.Join(lines, "\n") + "\n\nCurrent message:\n" + text
}
