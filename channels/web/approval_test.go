package web

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// TestApprovalCarriesItsButtons: an approval reply reaches the page with
// the request and one button per answer, each the command a click sends;
// a page that opens while the turn waits gets the same from "turn".
func TestApprovalCarriesItsButtons(t *testing.T) {
	req := protocol.ApprovalRequest{ID: "1a2b", Tool: "exec", Args: "rm -rf build", Key: "exec rm", Timeout: time.Hour}
	c, _, base := startChannel(t, "")
	c.UseTemporal(fixedTurns{TurnNow{Running: true, State: "RUN", Waiting: viewOf(&req)}}, "", "default")
	evs := openEvents(t, base+"/api/events?chat=c1")
	wantButtons := []any{
		map[string]any{"label": "Approve", "command": "/approve 1a2b", "verdict": "approve"},
		map[string]any{"label": "Deny", "command": "/deny 1a2b", "verdict": "deny"},
		map[string]any{"label": "Always this command", "command": "/approve 1a2b always", "verdict": "always"},
	}
	turn := next(t, evs)
	require.Equal(t, "turn", turn.name)
	waiting, _ := turn.data["waiting"].(map[string]any)
	require.NotNil(t, waiting, "a page opening meanwhile learns of the request: %v", turn.data)
	require.Equal(t, wantButtons, waiting["buttons"])
	require.Eventually(t, func() bool { return c.clients.count("c1") == 1 }, 5*time.Second, 5*time.Millisecond)

	route := protocol.Route{Channel: Name, ChatID: "c1", SenderID: senderID}
	ctx := context.Background()
	require.NoError(t, c.Send(ctx, channels.Reply{ID: "t#approval-1a2b", Route: route, Turn: "t", Text: req.Text(),
		MessageIDs: []string{"web-1"}, Kind: protocol.ReplyApproval, Approval: &req}))
	require.NoError(t, c.Send(ctx, channels.Reply{ID: "t#e#web-2", Route: route, Turn: "t", Text: "Approved: exec rm -rf build.",
		MessageIDs: []string{"web-2"}, StopReason: protocol.StopCommand}))
	ev := next(t, evs)
	require.Equal(t, "reply", ev.name)
	require.Equal(t, "approval", ev.data["kind"])
	shown, _ := ev.data["approval"].(map[string]any)
	require.NotNil(t, shown, "%v", ev.data)
	require.Equal(t, "1a2b", shown["id"])
	require.Equal(t, "exec rm -rf build", shown["call"])
	require.Equal(t, req.Text(), shown["text"])
	require.Equal(t, wantButtons, shown["buttons"])
	ev = next(t, evs)
	require.Nil(t, ev.data["approval"], "a plain reply has no buttons")
	require.Equal(t, "command", ev.data["stop_reason"], "the page tells a command's answer from the turn's")
}
