package discordpeer

import (
	"time"
)

// User is a Discord user as the gateway shows one.
type User struct {
	ID       string
	Username string
	Bot      bool
}

// Bot is the peer's bot user, for mentions and replies.
var Bot = User{ID: BotID, Username: BotName, Bot: true}

// Attachment is a file on a user's message (serve its data with AddFile).
type Attachment struct {
	ID          string
	Filename    string
	ContentType string
	Size        int
	URL         string
}

// Incoming is a user's message, sent to the bot as MESSAGE_CREATE.
type Incoming struct {
	ID        string // a new snowflake when ""
	ChannelID string
	GuildID   string // "" for a direct message
	Author    User
	Content   string
	Type      int // 0 default, 19 reply, 18 thread created…
	Mentions  []User
	// ReplyTo is the message this one answers; ReplyToAuthor its author.
	ReplyTo       string
	ReplyToAuthor *User
	Attachments   []Attachment
	WebhookID     string
}

func (u User) payload() map[string]any {
	return map[string]any{"id": u.ID, "username": u.Username, "discriminator": "0", "global_name": u.Username,
		"avatar": nil, "bot": u.Bot}
}

// Payload is the MESSAGE_CREATE data in Discord's documented shape.
func (in Incoming) Payload() map[string]any {
	mentions := []any{}
	for _, u := range in.Mentions {
		mentions = append(mentions, u.payload())
	}
	atts := []any{}
	for _, a := range in.Attachments {
		atts = append(atts, map[string]any{"id": a.ID, "filename": a.Filename, "content_type": a.ContentType,
			"size": a.Size, "url": a.URL, "proxy_url": a.URL})
	}
	d := map[string]any{
		"id": in.ID, "channel_id": in.ChannelID, "author": in.Author.payload(), "content": in.Content,
		"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00"), "edited_timestamp": nil,
		"tts": false, "mention_everyone": false, "mentions": mentions, "mention_roles": []any{},
		"attachments": atts, "embeds": []any{}, "pinned": false, "type": in.Type, "flags": 0,
		"nonce": in.ID, "components": []any{},
	}
	if in.GuildID != "" {
		d["guild_id"] = in.GuildID
		d["member"] = map[string]any{"roles": []any{}, "joined_at": "2024-01-01T00:00:00.000000+00:00", "deaf": false, "mute": false}
	}
	if in.WebhookID != "" {
		d["webhook_id"] = in.WebhookID
	}
	if in.ReplyTo != "" {
		ref := map[string]any{"message_id": in.ReplyTo, "channel_id": in.ChannelID}
		if in.GuildID != "" {
			ref["guild_id"] = in.GuildID
		}
		d["message_reference"] = ref
		d["referenced_message"] = nil // deleted, or not resolved
		if in.ReplyToAuthor != nil {
			d["referenced_message"] = map[string]any{"id": in.ReplyTo, "channel_id": in.ChannelID, "type": 0,
				"content": "an earlier message", "author": in.ReplyToAuthor.payload(), "mentions": []any{},
				"attachments": []any{}, "embeds": []any{}, "timestamp": "2024-01-01T00:00:00.000000+00:00"}
		}
	}
	return d
}

// Say sends a user's message to the bot and returns its id.
func (p *Peer) Say(in Incoming) string {
	if in.ID == "" {
		in.ID = p.ID()
	}
	p.Dispatch("MESSAGE_CREATE", in.Payload())
	return in.ID
}
