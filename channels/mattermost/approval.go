package mattermost

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// A bot's buttons on Mattermost need an integration URL the server can
// reach; a reaction does not. An approval request's post names in a prop
// the command each emoji sends, the bot offers those reactions, and a
// user's reaction_added becomes that command as their message.
const propApproval = "nanobot_approval"

// answerLegend starts the line that tells how to answer.
const answerLegend = "\n\nReact to answer: "

// verdictEmoji are the reactions answering a request, by verdict.
var verdictEmoji = map[string]string{
	protocol.VerdictApprove: "white_check_mark", protocol.VerdictDeny: "x",
	protocol.VerdictAlways: "repeat", protocol.VerdictRule: "pushpin",
}

// askByReaction adds the legend to a request's text and the prop mapping emoji to commands.
func askByReaction(text string, buttons []channels.ApprovalButton) (string, map[string]any) {
	commands := map[string]any{}
	var legend []string
	for _, b := range buttons {
		commands[verdictEmoji[b.Verdict]] = b.Command
		legend = append(legend, ":"+verdictEmoji[b.Verdict]+": "+b.Label)
	}
	return text + answerLegend + strings.Join(legend, " · "), map[string]any{propApproval: commands}
}

// offerReactions puts the answers' emojis under the request, one click away.
func (c *Channel) offerReactions(ctx context.Context, postID string, buttons []channels.ApprovalButton) {
	for _, b := range buttons {
		if err := c.React(ctx, protocol.Route{}, postID, verdictEmoji[b.Verdict]); err != nil {
			c.Log.Warn("mattermost could not offer an approval reaction", "post_id", postID, "error", err)
		}
	}
}

// reaction is the reaction_added event's data.reaction (a JSON string).
type reaction struct {
	UserID    string `json:"user_id"`
	PostID    string `json:"post_id"`
	EmojiName string `json:"emoji_name"`
}

// handleReaction turns a user's reaction on a request the bot posted into
// the command it names, through the manager's gate like a typed one; the
// answered request loses its prop and legend.
func (c *Channel) handleReaction(ctx context.Context, data json.RawMessage) {
	var ev struct {
		Reaction string `json:"reaction"`
	}
	var r reaction
	if json.Unmarshal(data, &ev) != nil || json.Unmarshal([]byte(ev.Reaction), &r) != nil || !validID(r.UserID) || !validID(r.PostID) {
		c.Log.Warn("mattermost reaction_added dropped: not one Mattermost sends", "bytes", len(data))
		return
	}
	botID := c.BotID()
	if r.UserID == botID {
		return
	}
	var req post
	if err := c.api.Call(ctx, http.MethodGet, "/posts/"+r.PostID, nil, &req); err != nil || req.UserID != botID {
		return // not the bot's post (or gone): a reaction like any other
	}
	commands, _ := req.Props[propApproval].(map[string]any)
	command, _ := commands[r.EmojiName].(string)
	if !channels.IsApprovalPress(command) {
		return
	}
	var ch struct {
		Type string `json:"type"`
	}
	if err := c.api.Call(ctx, http.MethodGet, "/channels/"+req.ChannelID, nil, &ch); err != nil {
		c.Log.Warn("mattermost approval reaction not taken: channel unknown", "post_id", r.PostID, "error", err)
		return
	}
	msg := protocol.Inbound{
		ID:      "mattermost-press:" + r.PostID + ":" + r.UserID + ":" + r.EmojiName,
		Route:   protocol.Route{Channel: Name, ChatID: req.ChannelID, ThreadID: req.RootID, SenderID: c.sender(ctx, r.UserID)},
		Content: command, Group: ch.Type != "D", SentAt: time.Now(),
		Metadata: map[string]string{"request_post_id": r.PostID, "button": "approval"}, // no message_id: nothing of theirs to react to
	}
	if req.RootID != "" {
		msg.Scope = protocol.Within(req.RootID)
	}
	_ = c.TakePress(ctx, msg.ID, msg, func() {
		text, _, _ := strings.Cut(req.Message, answerLegend)
		patch := map[string]any{"message": text + "\n\n_Answered._", "props": map[string]any{}}
		if err := c.api.Call(ctx, http.MethodPut, "/posts/"+r.PostID+"/patch", patch, nil); err != nil {
			c.Log.Warn("mattermost could not mark an answered request", "post_id", r.PostID, "error", err)
		}
	})
}
