package mattermost

import (
	"context"
	"fmt"
	"net/http"

	"github.com/nanobot-durable/nanobot/channels"
)

// withThreadContext gives the model, the first time the bot is addressed
// in a thread, the thread's last posts before this one, as nanobot does.
func (c *Channel) withThreadContext(ctx context.Context, p post, text, botID string) string {
	return c.threads.With(ctx, p.ChannelID+":"+p.RootID, text, func(ctx context.Context, limit int) ([]channels.ThreadPost, error) {
		var thread struct {
			Order []string        `json:"order"`
			Posts map[string]post `json:"posts"`
		}
		err := c.api.Call(ctx, http.MethodGet, fmt.Sprintf("/posts/%s/thread?perPage=%d", p.RootID, limit), nil, &thread)
		var posts []channels.ThreadPost
		for _, id := range thread.Order {
			if q := thread.Posts[id]; id != p.ID {
				author := channels.ThreadAuthor(q.UserID, botID, "<"+q.UserID+">")
				posts = append(posts, channels.ThreadPost{Author: author, Text: q.Message})
			}
		}
		return posts, err
	})
}
