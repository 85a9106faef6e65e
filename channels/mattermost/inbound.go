package mattermost

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// posted is a "posted" event's data: the post as a JSON string, the
// channel's type (D: a DM) and its team.
type posted struct {
	ChannelType string `json:"channel_type"`
	Post        string `json:"post"`
	TeamID      string `json:"team_id"`
}

// Mattermost ids are 26 lower-case letters and digits.
var idPattern = regexp.MustCompile(`^[a-z0-9]{26}$`)

func validID(id string) bool { return idPattern.MatchString(id) }

// handlePosted takes one "posted" event in: checked, filtered by nanobot's
// rules, de-duplicated, turned into an inbound message and published.
func (c *Channel) handlePosted(ctx context.Context, data json.RawMessage) {
	var ev posted
	var p post
	if json.Unmarshal(data, &ev) != nil || json.Unmarshal([]byte(ev.Post), &p) != nil {
		c.Log.Warn("mattermost posted event dropped: not one Mattermost sends", "bytes", len(data))
		return
	}
	if !validID(p.ID) || !validID(p.ChannelID) || !validID(p.UserID) || (p.RootID != "" && !validID(p.RootID)) {
		c.Log.Warn("mattermost post dropped: an id is missing or malformed", "post_id", p.ID, "channel_id", p.ChannelID)
		return
	}
	botID, username := c.Bot()
	if why := c.skipReason(ev, p, botID, username); why != "" {
		c.Log.Debug("mattermost post skipped", "why", why, "post_id", p.ID, "channel_id", p.ChannelID, "user", p.UserID)
		return
	}
	dm := ev.ChannelType == "D"
	thread := p.RootID
	if thread == "" && c.cfg.ReplyInThread && !dm {
		thread = p.ID // nanobot: a channel post is answered in a thread under it
	}
	content := strings.TrimSpace(mentionPattern(username).ReplaceAllString(p.Message, "$1$2"))
	msg := protocol.Inbound{
		ID:      Name + ":" + p.ID,
		Route:   protocol.Route{Channel: Name, ChatID: p.ChannelID, ThreadID: thread, SenderID: c.sender(ctx, p.UserID), ReplyTo: p.ID},
		Content: content, Group: !dm, SentAt: time.UnixMilli(p.CreateAt),
		Metadata: map[string]string{channels.MetaMessageID: p.ID, "root_id": p.RootID, "channel_type": ev.ChannelType},
	}
	if thread != "" {
		msg.Scope = protocol.Within(thread) // nanobot: mattermost:<channel>:<thread>
	}
	admitted := func(ctx context.Context, msg *protocol.Inbound) error {
		if p.RootID != "" && c.cfg.IncludeThreadContext && !strings.HasPrefix(content, "/") {
			msg.Content = c.withThreadContext(ctx, p, msg.Content, botID)
		}
		channels.TakeFiles(ctx, msg, p.FileIDs, c.download)
		if msg.Content == "" && len(msg.Media) == 0 {
			msg.Content = channels.EmptyMessage
		}
		return nil
	}
	_ = c.TakeInPatiently(ctx, "post:"+p.ID, msg, admitted, channels.PublishPatience) // Mattermost never sends a posted event again: offered until Temporal takes it
}

// skipReason tells why a post is left alone, "" to take it. Who may talk
// (allowFrom, pairing) is the manager's check, after this one.
func (c *Channel) skipReason(ev posted, p post, botID, username string) string {
	switch {
	case p.UserID == botID:
		return "the bot's own post"
	case strings.HasPrefix(p.Type, "system_"):
		return "a system message"
	case ev.ChannelType == "D":
		return c.cfg.DM.Skip(Name)
	case c.cfg.TeamID != "" && ev.TeamID != c.cfg.TeamID:
		return "another team than channels.mattermost.teamId"
	}
	return c.cfg.groupGate(p.RootID != "").Skip(p.ChannelID, func() bool {
		return botID != "" && mentionPattern(username).MatchString(p.Message)
	})
}

// mentionPattern matches @username as a word of its own (a sentence's full stop may follow).
func mentionPattern(username string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[^\w@.-])@` + regexp.QuoteMeta(username) + `(\.?$|\.?[^\w.-])`)
}

// sender is the sender's id as allowFrom is matched: the user id, with
// the username or email after a "|" when allowFromMatchMode asks for it.
func (c *Channel) sender(ctx context.Context, userID string) string {
	var u struct{ Username, Email string }
	if c.cfg.AllowFromMatchMode == "id" {
		return userID
	} else if err := c.api.Call(ctx, http.MethodGet, "/users/"+userID, nil, &u); err != nil {
		c.Log.Warn("mattermost user not found; matching allowFrom by id", "user", userID, "error", err)
		return userID
	} else if c.cfg.AllowFromMatchMode == "email" {
		return userID + "|" + strings.ToLower(u.Email)
	}
	return userID + "|" + u.Username
}

// maxDownload bounds a file taken into the workspace (nanobot's 20 MB).
const maxDownload = 20 << 20

// download saves a posted file into <workspace>/media; on failure it
// returns the note the model reads instead.
func (c *Channel) download(ctx context.Context, fileID string) (path, note string) {
	var info struct {
		Name string `json:"name"`
		Size int64  `json:"size"`
	}
	err := c.api.Call(ctx, http.MethodGet, "/files/"+fileID+"/info", nil, &info)
	if err == nil && info.Size > maxDownload {
		return "", channels.FileNote(info.Name, "too large")
	}
	if err == nil {
		path, err = c.api.Download(ctx, "/files/"+fileID, c.workspace, channels.MediaName("mattermost", fileID, info.Name, ""), maxDownload)
	}
	if err != nil {
		c.Log.Warn("mattermost file not downloaded", "file_id", fileID, "error", err)
		return "", channels.FileNote(info.Name, "download failed")
	}
	return path, ""
}
