package signal

import (
	"context"
	"strconv"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/protocol"
)

// maxMessageRunes is nanobot's limit on one Signal message.
const maxMessageRunes = 64000

// Send implements channels.Channel: the manager's part-by-part delivery.
func (c *Channel) Send(ctx context.Context, r channels.Reply) error {
	return channels.SendParts(ctx, c, r)
}

// MaxLength implements channels.PartSender.
func (c *Channel) MaxLength() int { return maxMessageRunes }

// SendPart implements channels.PartSender: a piece of text with its
// styles, or a file attached (a URL sent as a link).
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	params := recipient(r.Route.ChatID)
	switch {
	case p.Media != "" && (channels.IsLink(p.Media)):
		params["message"] = p.Media
	case p.Media != "":
		path, why, err := channels.LocalMedia(c.workspace, p.Media, maxFile)
		if why != "" {
			c.Log.Warn("signal attachment not sent", "file", path, "why", why, "error", err)
			params["message"] = channels.FileNote(p.Media, "send failed")
			break
		}
		params["message"], params["attachments"] = "", []string{path}
	default:
		text, styles := markdown.Signal(p.Text)
		if strings.TrimSpace(text) == "" {
			return "", nil
		}
		params["message"] = text
		if len(styles) > 0 {
			params["textStyle"] = styles
		}
	}
	var sent struct {
		Timestamp int64 `json:"timestamp"`
	}
	if err := c.rpc.Call(ctx, "send", params, &sent); err != nil {
		return "", err
	}
	if sent.Timestamp == 0 {
		return "", nil
	}
	return strconv.FormatInt(sent.Timestamp, 10), nil
}

// SendTyping implements channels.Typer.
func (c *Channel) SendTyping(ctx context.Context, route protocol.Route) error {
	return c.rpc.Call(ctx, "sendTyping", recipient(route.ChatID), nil)
}

// recipient addresses a chat: a group by its id, a person by number or uuid.
func recipient(chatID string) map[string]any {
	if isGroupID(chatID) {
		return map[string]any{"groupId": chatID}
	}
	return map[string]any{"recipient": []string{chatID}}
}

// isGroupID tells a group id (base64 of 32 bytes) from a number or a
// uuid, as nanobot does.
func isGroupID(id string) bool {
	return strings.Contains(id, "=") || (len(id) > 40 && !strings.Contains(id, "-"))
}
