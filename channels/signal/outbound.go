package signal

import (
	"context"
	"errors"
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
			params["message"] = "[attachment: " + p.Media + " - send failed]"
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
	if err := c.rpc.call(ctx, "send", params, &sent); err != nil {
		return "", sendError(err)
	}
	if sent.Timestamp == 0 {
		return "", nil
	}
	return strconv.FormatInt(sent.Timestamp, 10), nil
}

// SendTyping implements channels.Typer.
func (c *Channel) SendTyping(ctx context.Context, route protocol.Route) error {
	return c.rpc.call(ctx, "sendTyping", recipient(route.ChatID), nil)
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

// sendError: JSON-RPC's own refusals (bad params, no such method) will
// not change on a retry; signal-cli's errors and network errors may.
func sendError(err error) error {
	var refused *rpcError
	if errors.As(err, &refused) && refused.Code <= -32600 && refused.Code > -32700 {
		return &channels.SendError{Err: err, Permanent: true}
	}
	return err
}
