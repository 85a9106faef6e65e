package activities

import (
	"context"
	"fmt"
	"strings"

	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/triggers"
)

// cmdTrigger is /trigger <name>: a local trigger bound to this chat and
// session, opened from a script with `nanobot trigger <id> "message"`.
func (c *Commands) cmdTrigger(_ context.Context, in protocol.StepInput, args string) (string, error) {
	name := strings.TrimSpace(args)
	if name == "" {
		return "Usage: /trigger <name>\n\nCreate a named local trigger bound to this chat session.", nil
	}
	t, err := triggers.Open(c.workspace).Create(name, in.Message.Route.Channel, in.Message.Route.ChatID, in.SessionKey)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Trigger created: %s\nID: %s\n\nCommand:\nnanobot trigger %s \"message\"", t.Name, t.ID, t.ID), nil
}

// RestartElsewhereReply answers a /restart that reached a turn: only a
// gateway restarts, and it answers /restart before any turn sees it.
const RestartElsewhereReply = "Only the gateway restarts itself, and no gateway took this message: " +
	"restart the process that serves this chat (nanobot agent: run it again)."

func cmdRestartHere(*Commands, context.Context, protocol.StepInput, string) (string, error) {
	return RestartElsewhereReply, nil
}
