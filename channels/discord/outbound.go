package discord

import (
	"context"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// maxMessageRunes is Discord's limit on one message's content.
const maxMessageRunes = 2000

// maxUpload is the largest file a bot may attach without a boosted server.
const maxUpload = 10 << 20

// MaxLength implements channels.PartSender.
func (c *Channel) MaxLength() int { return maxMessageRunes }

// SendPart implements channels.PartSender: a file uploaded (a URL posted
// as a link), a piece of text posted. The reply's first part references the
// user's message.
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	if !snowflake.MatchString(r.Route.ChatID) {
		return "", &channels.SendError{Err: fmt.Errorf("discord channel id %q is not an id", r.Route.ChatID), Permanent: true}
	}
	ref := c.reference(r.Route, p.Index)
	if p.Media != "" {
		return c.sendMedia(ctx, r.Route, p.Media, ref)
	}
	m := &discordgo.MessageSend{Content: format.Markdown(p.Text), Reference: ref}
	if p.Last {
		m.Components = approvalRow(r) // the buttons go under the request's last piece
	}
	return c.post(ctx, r.Route.ChatID, m)
}

// streamInterval spaces the edits of a message being drawn (Discord allows
// about five edits per five seconds in a channel).
const streamInterval = time.Second

// EditMessage implements channels.Editor: the manager draws a streamed
// reply by editing the message it posted.
func (c *Channel) EditMessage(ctx context.Context, route protocol.Route, messageID, text string) error {
	if !snowflake.MatchString(route.ChatID) || !snowflake.MatchString(messageID) {
		return &channels.SendError{Err: fmt.Errorf("discord message %q in %q is not an id", messageID, route.ChatID), Permanent: true}
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return c.edit(cctx, route.ChatID, messageID, format.Markdown(text))
}

// StreamEvery implements channels.Editor: channels.discord.streaming.
func (c *Channel) StreamEvery() time.Duration { return c.streamEvery }

// reference points the reply's first part at the user's message; a
// deleted message does not fail the reply.
func (c *Channel) reference(route protocol.Route, index int) *discordgo.MessageReference {
	if index != 0 || !snowflake.MatchString(route.ReplyTo) {
		return nil
	}
	fail := false
	return &discordgo.MessageReference{MessageID: route.ReplyTo, ChannelID: route.ChatID, FailIfNotExists: &fail}
}

// mentions: the model's text may ping users it names, never @everyone,
// roles, or (as in nanobot) the user it replies to.
func mentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{discordgo.AllowedMentionTypeUsers}}
}

// post sends one message and returns its id.
func (c *Channel) post(ctx context.Context, channelID string, m *discordgo.MessageSend) (string, error) {
	m.AllowedMentions = mentions()
	sent, err := c.api.ChannelMessageSendComplex(channelID, m, discordgo.WithContext(ctx))
	if err != nil {
		return "", sendError("post message", err)
	}
	return sent.ID, nil
}

// edit changes a message the bot sent.
func (c *Channel) edit(ctx context.Context, channelID, messageID, text string) error {
	e := discordgo.NewMessageEdit(channelID, messageID).SetContent(text)
	e.AllowedMentions = mentions()
	_, err := c.api.ChannelMessageEditComplex(e, discordgo.WithContext(ctx))
	return sendError("edit message", err)
}

// sendMedia uploads a workspace file, or posts a URL as a link; a file
// that cannot go becomes a line saying so (channels.SendFile).
func (c *Channel) sendMedia(ctx context.Context, route protocol.Route, ref string, mref *discordgo.MessageReference) (string, error) {
	upload := func(path string) (string, error) {
		f, err := os.Open(path)
		if err != nil {
			return "", &channels.SendError{Err: fmt.Errorf("open %s: %w", filepath.Base(path), err), Permanent: true}
		}
		defer f.Close()
		name := filepath.Base(path)
		file := &discordgo.File{Name: name, ContentType: mime.TypeByExtension(filepath.Ext(name)), Reader: f}
		return c.post(ctx, route.ChatID, &discordgo.MessageSend{Files: []*discordgo.File{file}, Reference: mref})
	}
	return channels.SendFile(c.Log, c.workspace, ref, maxUpload, upload, func(text string) (string, error) {
		return c.post(ctx, route.ChatID, &discordgo.MessageSend{Content: text, Reference: mref})
	})
}

func newMessage(text string, ref *discordgo.MessageReference) *discordgo.MessageSend {
	return &discordgo.MessageSend{Content: text, Reference: ref}
}

// DrawHint implements channels.HintDrawer: a tool hint as Discord's small grey subtext.
func (c *Channel) DrawHint(hint string) string { return "-# ↳ " + hint }
