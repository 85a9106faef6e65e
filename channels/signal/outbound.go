package signal

import (
	"context"
	"maps"
	"strconv"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
	"github.com/nanobot-durable/nanobot/protocol"
)

// maxMessageRunes is nanobot's limit on one Signal message.
const maxMessageRunes = 64000

// MaxLength implements channels.PartSender.
func (c *Channel) MaxLength() int { return maxMessageRunes }

// SendPart implements channels.PartSender: a piece of text with its
// styles, or a file attached (a URL sent as a link, a file that cannot go
// as a line saying so: channels.SendFile).
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	if p.Media != "" {
		return channels.SendFile(c.Log, c.workspace, p.Media, maxFile, func(path string) (string, error) {
			return c.send(ctx, r.Route, map[string]any{"message": "", "attachments": []string{path}})
		}, func(text string) (string, error) {
			return c.send(ctx, r.Route, map[string]any{"message": text})
		})
	}
	text, styles := markdown.Signal(p.Text)
	if strings.TrimSpace(text) == "" {
		return "", nil
	}
	params := map[string]any{"message": text}
	if len(styles) > 0 {
		params["textStyle"] = styles
	}
	return c.send(ctx, r.Route, params)
}

// send is one message to the route's chat; it returns its timestamp, the
// id Signal knows it by.
func (c *Channel) send(ctx context.Context, route protocol.Route, params map[string]any) (string, error) {
	maps.Copy(params, recipient(route.ChatID))
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
