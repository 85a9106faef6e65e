package discord

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// What a presser the manager refused, or one whose answer found no agent, is told (only them).
const (
	pressRefusedText = "Only someone allowed in this chat can answer."
	pressFailedText  = "The agent could not take the answer; try again in a moment."
)

// interactionComponent is Discord's interaction type of a button press.
const interactionComponent = 3

// approvalRow is the action row of an approval request's buttons (nil: none),
// each button's custom_id the command a press sends.
func approvalRow(r channels.Reply) []discordgo.MessageComponent {
	buttons := r.Buttons()
	if len(buttons) == 0 {
		return nil
	}
	row := discordgo.ActionsRow{}
	for _, b := range buttons {
		style := discordgo.SecondaryButton
		switch b.Verdict {
		case protocol.VerdictApprove:
			style = discordgo.SuccessButton
		case protocol.VerdictDeny:
			style = discordgo.DangerButton
		}
		row.Components = append(row.Components, discordgo.Button{Label: b.Label, Style: style, CustomID: b.Command})
	}
	return []discordgo.MessageComponent{row}
}

// interaction is the part of an INTERACTION_CREATE the channel reads.
type interaction struct {
	ID        string `json:"id"`
	Type      int    `json:"type"`
	Token     string `json:"token"`
	ChannelID string `json:"channel_id"`
	GuildID   string `json:"guild_id"`
	Data      struct {
		CustomID      string `json:"custom_id"`
		ComponentType int    `json:"component_type"`
	} `json:"data"`
	Member *struct {
		User *user `json:"user"`
	} `json:"member"`
	User    *user `json:"user"`
	Message *struct {
		ID string `json:"id"`
	} `json:"message"`
}

// presser is who pressed: the member in a guild, the user in a DM.
func (in interaction) presser() *user {
	if in.Member != nil && in.Member.User != nil {
		return in.Member.User
	}
	return in.User
}

// handlePress turns a press of an approval button into the presser's
// message in the channel (thread) of the request, through the manager's
// gate like a typed one (TakePress). The interaction is answered either
// way: deferred when the answer went in (the buttons are then taken off),
// with a note only the presser sees when it did not.
func (c *Channel) handlePress(ctx context.Context, raw []byte) {
	var in interaction
	if err := json.Unmarshal(raw, &in); err != nil || !snowflake.MatchString(in.ID) || in.Token == "" {
		c.Log.Warn("discord interaction dropped: not one Discord sends", "id", idOf(raw), "error", err)
		return
	}
	who := in.presser()
	if in.Type != interactionComponent || !channels.IsApprovalPress(in.Data.CustomID) || who == nil ||
		!snowflake.MatchString(who.ID) || !snowflake.MatchString(in.ChannelID) || in.Message == nil || !snowflake.MatchString(in.Message.ID) {
		c.Log.Warn("discord interaction ignored: not an approval button of a message", "id", in.ID, "type", in.Type, "custom_id", in.Data.CustomID)
		c.respond(in, pressFailedText)
		return
	}
	msg := protocol.Inbound{
		ID:       "discord-press:" + in.ID,
		Route:    protocol.Route{Channel: Name, ChatID: in.ChannelID, SenderID: who.ID, ReplyTo: in.Message.ID},
		Content:  in.Data.CustomID,
		Group:    in.GuildID != "",
		SentAt:   time.Now(),
		Metadata: map[string]string{"request_message_id": in.Message.ID, "button": "approval"}, // no message_id: nothing of the presser to react to
	}
	if in.GuildID != "" {
		msg.Metadata["guild_id"] = in.GuildID
		if parent := c.threadParent(in.ChannelID); parent != "" {
			msg.Scope = protocol.Thread(parent, in.ChannelID) // as a typed message in the thread
		}
	}
	err := c.TakePress(ctx, "interaction:"+in.ID, msg, func() {
		c.respond(in, "")
		c.clearButtons(in.ChannelID, in.Message.ID)
	})
	switch {
	case err == nil, errors.Is(err, channels.ErrDuplicate): // answered, or answered before
	case errors.Is(err, channels.ErrRefused):
		c.respond(in, pressRefusedText)
	default: // a hook's answer, or Temporal did not take it (TakeIn logged why)
		c.respond(in, pressFailedText)
	}
}

// respond answers an interaction: a deferred update (6) when text is "",
// else a message only the presser sees (4, ephemeral).
func (c *Channel) respond(in interaction, text string) {
	resp := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}
	if text != "" {
		resp = &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: text, Flags: discordgo.MessageFlagsEphemeral}}
	}
	ctx, cancel := c.Call(callTimeout)
	defer cancel()
	if err := c.api.InteractionRespond(&discordgo.Interaction{ID: in.ID, Token: in.Token}, resp, discordgo.WithContext(ctx)); err != nil {
		c.Log.Warn("discord interaction not answered", "id", in.ID, "error", err)
	}
}

// clearButtons takes the buttons off an answered request, best effort: a
// later press would only be told the request was already answered.
func (c *Channel) clearButtons(channelID, messageID string) {
	ctx, cancel := c.Call(callTimeout)
	defer cancel()
	e := discordgo.NewMessageEdit(channelID, messageID)
	e.Components = &[]discordgo.MessageComponent{}
	if _, err := c.api.ChannelMessageEditComplex(e, discordgo.WithContext(ctx)); err != nil {
		c.Log.Warn("discord could not take the buttons off an answered request", "channel_id", channelID, "message_id", messageID, "error", err)
	}
}
