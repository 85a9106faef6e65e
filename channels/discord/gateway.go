package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/bwmarrin/discordgo"

	"github.com/nanobot-durable/nanobot/channels/botgateway"
)

// maxFrame bounds one gateway message: a big guild's GUILD_CREATE is large.
const maxFrame = 32 << 20

// fatalClose are gateway close codes a new attempt cannot fix by itself.
var fatalClose = map[int]string{
	4004: "authentication failed (check channels.discord.token)",
	4010: "invalid shard",
	4011: "sharding required",
	4012: "invalid API version",
	4013: "invalid intents (check channels.discord.intents)",
	4014: "disallowed intents: enable the Message Content intent for the bot in Discord's developer portal, or lower channels.discord.intents",
}

// runGateway holds Discord's gateway until ctx ends.
func (c *Channel) runGateway(ctx context.Context) {
	botgateway.Run(ctx, &c.Base, botgateway.Spec{
		URL:     c.gatewayURL,
		Token:   func(context.Context) (string, error) { return botToken(c.cfg.Token), nil },
		Intents: c.cfg.Intents,
		Fatal:   fatalClose,
		Fresh:   []int{4007, 4009}, // an invalid seq, a session timed out: identify anew
		Jitter:  true,
		Dial:    c.dial,
	}, c.onDispatch)
}

// gatewayURL asks GET /gateway where the WebSocket is, in the API version
// and encoding the channel speaks.
func (c *Channel) gatewayURL(ctx context.Context) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	u, err := c.api.Gateway(discordgo.WithContext(cctx))
	if err != nil {
		return "", fmt.Errorf("discord gateway not reachable: %w", err)
	}
	return u + "?v=" + discordgo.APIVersion + "&encoding=json", nil
}

// stateEvents are the dispatches that keep the channel state discordgo
// holds (which channel is a thread of which), as discordgo's types.
var stateEvents = map[string]func() any{
	"READY":            func() any { return &discordgo.Ready{} },
	"GUILD_CREATE":     func() any { return &discordgo.GuildCreate{} },
	"GUILD_UPDATE":     func() any { return &discordgo.GuildUpdate{} },
	"GUILD_DELETE":     func() any { return &discordgo.GuildDelete{} },
	"CHANNEL_CREATE":   func() any { return &discordgo.ChannelCreate{} },
	"CHANNEL_UPDATE":   func() any { return &discordgo.ChannelUpdate{} },
	"CHANNEL_DELETE":   func() any { return &discordgo.ChannelDelete{} },
	"THREAD_CREATE":    func() any { return &discordgo.ThreadCreate{} },
	"THREAD_UPDATE":    func() any { return &discordgo.ThreadUpdate{} },
	"THREAD_DELETE":    func() any { return &discordgo.ThreadDelete{} },
	"THREAD_LIST_SYNC": func() any { return &discordgo.ThreadListSync{} },
}

// onDispatch handles the gateway's events in their order: messages and
// button presses are taken in, the others keep the channel state.
func (c *Channel) onDispatch(ctx context.Context, d botgateway.Dispatch) {
	switch d.Type {
	case "MESSAGE_CREATE":
		c.handle(ctx, d.Data)
		return
	case "INTERACTION_CREATE": // an approval button pressed
		c.handlePress(ctx, d.Data)
		return
	}
	newEvent, ok := stateEvents[d.Type]
	if !ok {
		c.Log.Debug("discord gateway event ignored", "type", d.Type, "seq", d.Seq)
		return
	}
	ev := newEvent()
	if err := json.Unmarshal(d.Data, ev); err != nil {
		c.Log.Warn("discord gateway event unreadable; dropped", "type", d.Type, "seq", d.Seq, "error", err)
		return
	}
	if err := c.api.State.OnInterface(c.api, ev); err != nil && !errors.Is(err, discordgo.ErrStateNotFound) {
		c.Log.Debug("discord state not updated", "type", d.Type, "seq", d.Seq, "error", err)
	}
}
