package telegram

import (
	"context"
	"strconv"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/nanobot-durable/nanobot/protocol"
)

// SendTyping implements channels.Typer: Telegram shows "typing…" for about
// five seconds per call; the manager renews it.
func (c *Channel) SendTyping(ctx context.Context, route protocol.Route) error {
	if c.bot == nil {
		return nil
	}
	_, err := c.bot.SendChatAction(ctx, &bot.SendChatActionParams{
		ChatID: route.ChatID, MessageThreadID: threadID(route), Action: models.ChatActionTyping,
	})
	return err
}

// AckEmoji implements channels.Reactor: channels.telegram.reactEmoji.
func (c *Channel) AckEmoji() string { return c.cfg.ReactEmoji }

// React implements channels.Reactor: reactEmoji on the user's message, to
// say it was received.
func (c *Channel) React(ctx context.Context, route protocol.Route, messageID, emoji string) error {
	return c.setReaction(ctx, route, messageID, []models.ReactionType{{
		Type: models.ReactionTypeTypeEmoji, ReactionTypeEmoji: &models.ReactionTypeEmoji{Emoji: emoji},
	}})
}

// Unreact implements channels.Reactor. nanobot leaves Telegram's reaction
// on once the answer is out, and so do we: it marks what was answered.
func (c *Channel) Unreact(context.Context, protocol.Route, string, string) error { return nil }

func (c *Channel) setReaction(ctx context.Context, route protocol.Route, messageID string, r []models.ReactionType) error {
	id, err := strconv.Atoi(messageID)
	if err != nil || c.bot == nil {
		return nil
	}
	_, err = c.bot.SetMessageReaction(ctx, &bot.SetMessageReactionParams{ChatID: route.ChatID, MessageID: id, Reaction: r})
	return err
}
