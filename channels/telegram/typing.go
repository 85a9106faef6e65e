package telegram

import (
	"context"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/nanobot-durable/nanobot/protocol"
)

// Typing indicator: Telegram shows "typing…" for about five seconds per
// call, so it is renewed while a turn runs, up to a bound in case no
// reply ever comes here (delivered by another gateway, or lost).
const (
	typingEvery = 4 * time.Second
	typingBound = 5 * time.Minute
)

// startTyping reacts to the user's message (reactEmoji) and shows
// "typing…" in the chat until the reply is sent or the bound passes.
// Both are best effort: a server without them is logged once.
func (c *Channel) startTyping(route protocol.Route, msgID int) {
	if c.runCtx == nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.runCtx, typingBound)
	key := chatKey(route)
	c.mu.Lock()
	if old := c.typing[key]; old != nil {
		old()
	}
	c.typing[key] = cancel
	c.mu.Unlock()
	go func() {
		defer cancel()
		if c.cfg.ReactEmoji != "" && msgID != 0 {
			c.react(ctx, route, msgID)
		}
		tick := time.NewTicker(typingEvery)
		defer tick.Stop()
		for {
			cctx, done := context.WithTimeout(ctx, callTimeout)
			_, err := c.bot.SendChatAction(cctx, &bot.SendChatActionParams{
				ChatID: route.ChatID, MessageThreadID: threadID(route), Action: models.ChatActionTyping,
			})
			done()
			if err != nil {
				if ctx.Err() == nil {
					c.warnOnce("sendChatAction", err)
				}
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// stopTyping ends the chat's typing indicator.
func (c *Channel) stopTyping(route protocol.Route) {
	key := chatKey(route)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cancel := c.typing[key]; cancel != nil {
		cancel()
		delete(c.typing, key)
	}
}

// react puts reactEmoji on the user's message, to say it was received.
func (c *Channel) react(ctx context.Context, route protocol.Route, msgID int) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := c.bot.SetMessageReaction(cctx, &bot.SetMessageReactionParams{
		ChatID: route.ChatID, MessageID: msgID,
		Reaction: []models.ReactionType{{
			Type: models.ReactionTypeTypeEmoji, ReactionTypeEmoji: &models.ReactionTypeEmoji{Emoji: c.cfg.ReactEmoji},
		}},
	})
	if err != nil && ctx.Err() == nil {
		c.warnOnce("setMessageReaction", err)
	}
}
