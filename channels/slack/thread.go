package slack

import (
	"context"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/slack-go/slack"
)

// withThreadContext gives the model the thread's earlier messages the
// first time the bot is pulled into an existing thread
// (includeThreadContext, threadContextLimit), in nanobot's words.
func (c *Channel) withThreadContext(ctx context.Context, e event, text, botID string) string {
	if !c.cfg.IncludeThreadContext || e.ThreadTS == "" || e.TS == e.ThreadTS {
		return text
	}
	return c.threads.With(ctx, e.Channel+":"+e.ThreadTS, text, func(ctx context.Context, limit int) ([]channels.ThreadPost, error) {
		rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		msgs, _, _, err := c.api.GetConversationRepliesContext(rctx, &slack.GetConversationRepliesParameters{
			ChannelID: e.Channel, Timestamp: e.ThreadTS, Limit: limit,
		})
		var posts []channels.ThreadPost
		for _, m := range msgs {
			if m.Timestamp == e.TS || m.SubType != "" {
				continue
			}
			sender := m.User
			if sender == "" {
				sender = m.BotID
			}
			label := channels.ThreadAuthor(sender, botID, "<@"+sender+">")
			if sender == "" {
				label = "unknown"
			}
			posts = append(posts, channels.ThreadPost{Author: label, Text: cleanText(m.Text, botID)})
		}
		return posts, err
	})
}
