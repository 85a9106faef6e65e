package mattermost

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Limits of Mattermost's defaults: a post's message, an upload.
const (
	maxMessageRunes = 16383
	maxUpload       = 50 << 20
)

// streamInterval spaces the edits of a post being drawn.
const streamInterval = time.Second

// MaxLength implements channels.PartSender.
func (c *Channel) MaxLength() int { return maxMessageRunes }

// SendPart implements channels.PartSender: a file uploaded and posted (a
// URL posted as a link), a piece of text posted, in the reply's thread.
// An approval request's last piece asks for a reaction (see approval.go).
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	out := post{ChannelID: r.Route.ChatID, RootID: r.Route.ThreadID, Message: p.Text}
	if p.Media != "" {
		return c.postMedia(ctx, out, p.Media)
	}
	buttons := r.Buttons()
	if p.Last && len(buttons) > 0 {
		out.Message, out.Props = askByReaction(out.Message, buttons)
	}
	id, err := c.createPost(ctx, out)
	if err == nil && out.Props != nil {
		c.offerReactions(ctx, id, buttons)
	}
	return id, err
}

// EditMessage implements channels.Editor: the streamed post is patched.
func (c *Channel) EditMessage(ctx context.Context, _ protocol.Route, messageID, text string) error {
	return c.api.Call(ctx, http.MethodPut, "/posts/"+messageID+"/patch", map[string]string{"message": text}, nil)
}

// StreamEvery implements channels.Editor: channels.mattermost.streaming.
func (c *Channel) StreamEvery() time.Duration {
	return channels.EditEvery(c.cfg.Streaming, streamInterval)
}

// postMedia uploads a workspace file and posts it; a URL is posted as a
// link, and a file that cannot go as a line saying so (channels.SendFile).
func (c *Channel) postMedia(ctx context.Context, out post, ref string) (string, error) {
	upload := func(path string) (string, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		var up struct {
			FileInfos []struct{ ID string } `json:"file_infos"`
		}
		query := url.Values{"channel_id": {out.ChannelID}, "filename": {filepath.Base(path)}}.Encode()
		if err := c.api.Send(ctx, http.MethodPost, "/files?"+query, data, "application/octet-stream", &up); err != nil {
			return "", err
		}
		if len(up.FileInfos) != 1 {
			return "", &channels.SendError{Err: fmt.Errorf("mattermost upload answered %d files for one", len(up.FileInfos)), Permanent: true}
		}
		out.FileIDs = []string{up.FileInfos[0].ID}
		return c.createPost(ctx, out)
	}
	return channels.SendFile(c.Log, c.workspace, ref, maxUpload, upload, func(text string) (string, error) {
		out.Message, out.FileIDs = text, nil // a refused file post is not sent again
		return c.createPost(ctx, out)
	})
}

// SendTyping implements channels.Typer (POST /users/{bot}/typing).
func (c *Channel) SendTyping(ctx context.Context, route protocol.Route) error {
	return c.api.Call(ctx, http.MethodPost, "/users/"+c.BotID()+"/typing",
		map[string]string{"channel_id": route.ChatID, "parent_id": route.ThreadID}, nil)
}

// AckEmoji implements channels.Reactor: nanobot's reactEmoji.
func (c *Channel) AckEmoji() string { return c.cfg.ReactEmoji }

// React implements channels.Reactor.
func (c *Channel) React(ctx context.Context, _ protocol.Route, postID, emoji string) error {
	return c.api.Call(ctx, http.MethodPost, "/reactions", map[string]string{"user_id": c.BotID(), "post_id": postID, "emoji_name": emoji}, nil)
}

// Unreact implements channels.Reactor.
func (c *Channel) Unreact(ctx context.Context, _ protocol.Route, postID, emoji string) error {
	return c.api.Call(ctx, http.MethodDelete, "/users/"+c.BotID()+"/posts/"+postID+"/reactions/"+emoji, nil, nil)
}

// ReplyShown implements channels.Finisher: doneEmoji goes on the messages a
// turn's answer answers, as in nanobot.
func (c *Channel) ReplyShown(ctx context.Context, r channels.Reply) {
	if c.cfg.DoneEmoji == "" {
		return
	}
	for _, postID := range r.Answered(Name) {
		if err := c.React(ctx, r.Route, postID, c.cfg.DoneEmoji); err != nil {
			c.Log.Debug("mattermost done reaction not added", "post_id", postID, "error", err)
		}
	}
}
