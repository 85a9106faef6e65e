package discord

import (
	"context"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/nanobot-durable/nanobot/protocol"
)

// SendTyping implements channels.Typer: Discord shows "typing…" for ten
// seconds per call; the manager renews it.
func (c *Channel) SendTyping(ctx context.Context, route protocol.Route) error {
	if !snowflake.MatchString(route.ChatID) {
		return nil
	}
	return c.api.ChannelTyping(route.ChatID, discordgo.WithContext(ctx))
}

// AckEmoji implements channels.Reactor: nanobot's readReceiptEmoji.
func (c *Channel) AckEmoji() string { return c.cfg.ReadReceiptEmoji }

// React implements channels.Reactor: the read receipt on the user's
// message, and workingEmoji after workingEmojiDelay if the turn still runs.
func (c *Channel) React(ctx context.Context, route protocol.Route, messageID, emoji string) error {
	if !snowflake.MatchString(route.ChatID) || !snowflake.MatchString(messageID) {
		return nil
	}
	err := c.api.MessageReactionAdd(route.ChatID, messageID, emoji, discordgo.WithContext(ctx))
	c.working.schedule(route.ChatID, messageID)
	return err
}

// Unreact implements channels.Reactor: both emojis come off with the answer, as in nanobot.
func (c *Channel) Unreact(ctx context.Context, route protocol.Route, messageID, emoji string) error {
	if !snowflake.MatchString(route.ChatID) || !snowflake.MatchString(messageID) {
		return nil
	}
	c.working.cancel(ctx, route.ChatID, messageID)
	return c.api.MessageReactionRemove(route.ChatID, messageID, emoji, "@me", discordgo.WithContext(ctx))
}

// workingEmojis are the delayed "working" reactions of running turns.
type workingEmojis struct {
	c       *Channel
	mu      sync.Mutex
	pending map[string]*working // by channel and message
}

type working struct {
	timer *time.Timer
	added bool
}

func newWorkingEmojis(c *Channel) *workingEmojis {
	return &workingEmojis{c: c, pending: map[string]*working{}}
}

func (w *workingEmojis) schedule(channelID, messageID string) {
	emoji, delay := w.c.cfg.WorkingEmoji, time.Duration(w.c.cfg.WorkingEmojiDelay*float64(time.Second))
	if emoji == "" {
		return
	}
	key := channelID + "/" + messageID
	w.mu.Lock()
	defer w.mu.Unlock()
	if old := w.pending[key]; old != nil {
		old.timer.Stop()
	}
	it := &working{}
	it.timer = time.AfterFunc(delay, func() {
		ctx, cancel := w.c.Call(callTimeout)
		defer cancel()
		if err := w.c.api.MessageReactionAdd(channelID, messageID, emoji, discordgo.WithContext(ctx)); err != nil {
			w.c.Log.Debug("discord working emoji not added", "message_id", messageID, "error", err)
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.pending[key] == it {
			it.added = true
			return
		}
		// the answer came while the reaction was on its way: take it off again
		go w.remove(channelID, messageID, emoji)
	})
	w.pending[key] = it
}

func (w *workingEmojis) cancel(ctx context.Context, channelID, messageID string) {
	key := channelID + "/" + messageID
	w.mu.Lock()
	it := w.pending[key]
	delete(w.pending, key)
	added := it != nil && it.added
	w.mu.Unlock()
	if it == nil {
		return
	}
	it.timer.Stop()
	if added {
		_ = w.c.api.MessageReactionRemove(channelID, messageID, w.c.cfg.WorkingEmoji, "@me", discordgo.WithContext(ctx))
	}
}

func (w *workingEmojis) remove(channelID, messageID, emoji string) {
	ctx, cancel := w.c.Call(callTimeout)
	defer cancel()
	_ = w.c.api.MessageReactionRemove(channelID, messageID, emoji, "@me", discordgo.WithContext(ctx))
}

// stopAll forgets the pending reactions (the channel stops).
func (w *workingEmojis) stopAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, it := range w.pending {
		it.timer.Stop()
		delete(w.pending, k)
	}
}
