package teams

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// MaxLength implements channels.PartSender.
func (c *Channel) MaxLength() int { return maxTextRunes }

// SendPart implements channels.PartSender: a Markdown message in the
// conversation, the first part answering the user's message (replyInThread),
// an approval request's last part with its Adaptive Card.
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	text := p.Text
	if p.Media != "" {
		text = p.Media // a link; a workspace file is named, not uploaded
		if !channels.IsLink(p.Media) {
			text = channels.FileNote(filepath.Base(p.Media), "files are not sent to Teams by this build")
		}
	}
	a := map[string]any{"type": "message", "text": text, "textFormat": "markdown"}
	if p.Index == 0 && c.cfg.ReplyInThread && r.Route.ReplyTo != "" {
		a["replyToId"] = r.Route.ReplyTo
	}
	if buttons := r.Buttons(); p.Last && len(buttons) > 0 {
		a["attachments"] = []any{approvalCard(buttons)}
	}
	return c.post(ctx, r.Route, "", a)
}

// approvalCard is an Adaptive Card of the request's answers: each
// Action.Submit sends its command back as the activity's value.
func approvalCard(buttons []channels.ApprovalButton) map[string]any {
	var actions []any
	for _, b := range buttons {
		style := channels.VerdictStyle(b.Verdict, "positive", "destructive", "default")
		actions = append(actions, map[string]any{"type": "Action.Submit", "title": b.Label, "style": style, "data": map[string]string{"nanobot": b.Command}})
	}
	return map[string]any{"contentType": "application/vnd.microsoft.card.adaptive", "content": map[string]any{
		"type": "AdaptiveCard", "version": "1.4", "body": []any{}, "actions": actions,
	}}
}

// EditMessage implements channels.Editor: a streamed reply is drawn by
// updating the activity the channel posted.
func (c *Channel) EditMessage(ctx context.Context, route protocol.Route, messageID, text string) error {
	_, err := c.post(ctx, route, messageID, map[string]any{"type": "message", "id": messageID, "text": text, "textFormat": "markdown"})
	return err
}

// StreamEvery implements channels.Editor: channels.msteams.streaming.
func (c *Channel) StreamEvery() time.Duration {
	return channels.EditEvery(c.cfg.Streaming, streamEvery)
}

// SendTyping implements channels.Typer.
func (c *Channel) SendTyping(ctx context.Context, route protocol.Route) error {
	_, err := c.post(ctx, route, "", map[string]any{"type": "typing"})
	return err
}

// post sends an activity to the route's conversation, at the serviceUrl
// its last inbound activity came from (PUT over activityID when it is
// set), and returns the activity's id.
func (c *Channel) post(ctx context.Context, route protocol.Route, activityID string, a map[string]any) (string, error) {
	serviceURL, err := c.convs.Get(route.ChatID)
	if err != nil {
		return "", fmt.Errorf("msteams conversation %q: %w", route.ChatID, err)
	}
	if serviceURL == "" || !c.trusted(serviceURL) {
		return "", &channels.SendError{Err: fmt.Errorf("msteams conversation %q: no trusted serviceUrl known (the bot answers conversations that wrote to it)", route.ChatID), Permanent: true}
	}
	method, path := http.MethodPost, "/v3/conversations/"+url.PathEscape(route.ChatID)+"/activities"
	if activityID != "" {
		method, path = http.MethodPut, path+"/"+url.PathEscape(activityID)
	}
	var out struct {
		ID string `json:"id"`
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := c.api.Call(cctx, method, strings.TrimSuffix(serviceURL, "/")+path, a, &out); err != nil {
		return "", err
	}
	if out.ID == "" {
		return activityID, nil
	}
	return out.ID, nil
}

var (
	_ channels.Editor = (*Channel)(nil)
	_ channels.Typer  = (*Channel)(nil)
)
