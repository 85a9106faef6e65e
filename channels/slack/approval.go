package slack

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/slack-go/slack"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// Approval buttons: their action ids, and the block that holds them.
const (
	approvalActionPrefix = "nanobot_approval_"
	approvalBlockID      = "nanobot_approval"
	// maxSectionText is Slack's limit on a section block's text.
	maxSectionText = 3000
)

// approvalBlocks are the request's text and its buttons (nil: a reply
// without buttons, or a text too long for a section, which names the commands).
func approvalBlocks(r channels.Reply, text string) []slack.Block {
	buttons := r.Buttons()
	if len(buttons) == 0 || len([]rune(text)) > maxSectionText {
		return nil
	}
	var elems []slack.BlockElement
	for _, b := range buttons {
		btn := slack.NewButtonBlockElement(approvalActionPrefix+b.Verdict, b.Command, slack.NewTextBlockObject(slack.PlainTextType, b.Label, false, false))
		switch b.Verdict {
		case protocol.VerdictApprove:
			btn.WithStyle(slack.StylePrimary)
		case protocol.VerdictDeny:
			btn.WithStyle(slack.StyleDanger)
		}
		elems = append(elems, btn)
	}
	return []slack.Block{
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil),
		slack.NewActionBlock(approvalBlockID, elems...),
	}
}

// handlePress turns a click on an approval button (a block_actions
// interaction) into the clicker's message in the channel and thread of the
// request, through the manager's gate like a typed one; once it reached the
// agent the buttons give way to a line saying who answered.
func (c *Channel) handlePress(ctx context.Context, req request) {
	var ic slack.InteractionCallback
	if err := json.Unmarshal(req.payload, &ic); err != nil {
		c.Log.Warn("slack interaction not understood; dropped", "envelope", req.envelopeID, "error", err)
		return
	}
	if ic.Type != slack.InteractionTypeBlockActions {
		c.Log.Debug("slack interaction ignored", "type", string(ic.Type))
		return
	}
	for _, a := range ic.ActionCallback.BlockActions {
		if a == nil || !strings.HasPrefix(a.ActionID, approvalActionPrefix) {
			continue
		}
		c.press(ctx, req.envelopeID, ic, a)
	}
}

func (c *Channel) press(ctx context.Context, envelopeID string, ic slack.InteractionCallback, a *slack.BlockAction) {
	channel, ts := ic.Container.ChannelID, ic.Container.MessageTs
	if channel == "" {
		channel = ic.Channel.ID
	}
	if ts == "" {
		ts = ic.Message.Timestamp
	}
	thread := ic.Container.ThreadTs
	if thread == "" {
		thread = ic.Message.ThreadTimestamp
	}
	if thread == ts {
		thread = "" // a top-level request someone replied to: still the chat's, not a thread's
	}
	if !channels.IsApprovalPress(a.Value) || ic.User.ID == "" || channel == "" || !validTS(ts) {
		c.Log.Warn("slack button press ignored: not an approval answer on a message", "value", a.Value, "user", ic.User.ID, "channel", channel)
		return
	}
	if c.Seen().Add(keyOf("envelope:", envelopeID), keyOf("press:"+channel+":", a.ActionTs)) {
		c.Log.Info("slack button press redelivered; already taken in", "envelope", envelopeID)
		return
	}
	msg := protocol.Inbound{
		ID:      "slack-press:" + channel + ":" + ts + ":" + a.ActionTs,
		Route:   protocol.Route{Channel: Name, ChatID: channel, ThreadID: thread, SenderID: ic.User.ID},
		Content: a.Value,
		Group:   !strings.HasPrefix(channel, "D"),
		SentAt:  tsTime(a.ActionTs),
		Metadata: map[string]string{
			"slack_ts": ts, "slack_thread_ts": thread, "slack_event": "block_actions", "button": "approval",
		},
	}
	if thread != "" {
		msg.Scope = protocol.Within(thread) // the thread's session asked, as a typed answer there
	}
	err := c.TakeInPatiently(ctx, "", msg, nil, publishPatience)
	switch {
	case errors.Is(err, channels.ErrRefused):
		return // the manager logged who was refused; the buttons stay for someone allowed
	case err != nil:
		c.Log.Error("slack button press could not be handed to the agent", "channel", channel, "user", ic.User.ID, "error", err)
		return
	}
	c.answered(ctx, channel, ts, ic, a.Value)
}

// answered replaces a request's buttons with who answered how, best
// effort: a later click is only told the request was already answered.
func (c *Channel) answered(ctx context.Context, channel, ts string, ic slack.InteractionCallback, command string) {
	var kept []slack.Block
	for _, b := range ic.Message.Blocks.BlockSet {
		if b.BlockType() != slack.MBTAction {
			kept = append(kept, b)
		}
	}
	kept = append(kept, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, "<@"+ic.User.ID+"> answered `"+command+"`", false, false)))
	_, _, _, err := c.api.UpdateMessageContext(ctx, channel, ts, slack.MsgOptionText(ic.Message.Text, false), slack.MsgOptionBlocks(kept...))
	if err != nil {
		c.Log.Warn("slack could not take the buttons off an answered request", "channel", channel, "ts", ts, "error", err)
	}
}
