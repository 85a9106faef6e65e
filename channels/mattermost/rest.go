package mattermost

import (
	"context"
	"net/http"
)

// post is the part of a Mattermost post the channel reads and writes.
type post struct {
	ID        string         `json:"id,omitempty"`
	UserID    string         `json:"user_id,omitempty"`
	ChannelID string         `json:"channel_id,omitempty"`
	RootID    string         `json:"root_id,omitempty"`
	Message   string         `json:"message,omitempty"`
	Type      string         `json:"type,omitempty"`
	CreateAt  int64          `json:"create_at,omitempty"`
	FileIDs   []string       `json:"file_ids,omitempty"`
	Props     map[string]any `json:"props,omitempty"`
}

// createPost is POST /posts; it returns the new post's id.
func (c *Channel) createPost(ctx context.Context, p post) (string, error) {
	err := c.api.Call(ctx, http.MethodPost, "/posts", p, &p)
	return p.ID, err
}
