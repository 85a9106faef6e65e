package discord

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"unicode/utf8"
)

// The MESSAGE_CREATE payload, as much of it as the channel reads. It is
// decoded here, strictly, rather than trusted from discordgo: discordgo
// hands on a half-decoded message when a field has the wrong type.
type message struct {
	ID                string        `json:"id"`
	ChannelID         string        `json:"channel_id"`
	GuildID           string        `json:"guild_id"`
	Author            *user         `json:"author"`
	Content           string        `json:"content"`
	Type              int           `json:"type"`
	Timestamp         string        `json:"timestamp"`
	WebhookID         string        `json:"webhook_id"`
	Mentions          []user        `json:"mentions"`
	Attachments       []attachment  `json:"attachments"`
	MessageReference  *messageRef   `json:"message_reference"`
	ReferencedMessage *referencedTo `json:"referenced_message"`
}

type user struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	Bot      bool   `json:"bot"`
}

type attachment struct {
	ID          string `json:"id"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	URL         string `json:"url"`
	ProxyURL    string `json:"proxy_url"`
}

type messageRef struct {
	MessageID string `json:"message_id"`
	ChannelID string `json:"channel_id"`
}

// referencedTo is the message a reply answers (null when it was deleted).
type referencedTo struct {
	Author *user `json:"author"`
}

// Discord's message types a user's prompt comes in; the others are system
// messages (a thread created, a pin, a member joined).
const (
	typeDefault = 0
	typeReply   = 19
)

// Bounds on what a real message can be: Discord caps content at 4000
// characters (with Nitro), attachments at 10 per message.
const (
	maxContentRunes = 4000
	maxAttachments  = 10
	maxPayloadBytes = 1 << 20
)

var snowflake = regexp.MustCompile(`^[0-9]{1,20}$`)

// errBadPayload marks a payload Discord would never send; it is dropped.
var errBadPayload = errors.New("bad MESSAGE_CREATE payload")

// decodeMessage reads and checks one MESSAGE_CREATE payload. The id it
// returns is the message's id as far as it could be read, for the log.
func decodeMessage(raw []byte) (message, string, error) {
	id := idOf(raw)
	bad := func(format string, a ...any) (message, string, error) {
		return message{}, id, fmt.Errorf("%w: %s", errBadPayload, fmt.Sprintf(format, a...))
	}
	if len(raw) > maxPayloadBytes {
		return bad("%d bytes", len(raw))
	}
	if !utf8.Valid(raw) {
		return bad("not valid UTF-8")
	}
	var m message
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&m); err != nil {
		return bad("%v", err)
	}
	switch {
	case !snowflake.MatchString(m.ID):
		return bad("no message id")
	case !snowflake.MatchString(m.ChannelID):
		return bad("no channel_id")
	case m.GuildID != "" && !snowflake.MatchString(m.GuildID):
		return bad("guild_id %q is not an id", m.GuildID)
	case m.Author == nil || !snowflake.MatchString(m.Author.ID):
		return bad("no author")
	case utf8.RuneCountInString(m.Content) > maxContentRunes:
		return bad("content of %d characters is over Discord's %d", utf8.RuneCountInString(m.Content), maxContentRunes)
	case len(m.Attachments) > maxAttachments:
		return bad("%d attachments", len(m.Attachments))
	}
	for _, a := range m.Attachments {
		if !snowflake.MatchString(a.ID) {
			return bad("an attachment without an id")
		}
	}
	return m, m.ID, nil
}

// idOf reads a payload's "id" however broken the rest is, for the log.
func idOf(raw []byte) string {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(raw, &probe) != nil || len(probe.ID) == 0 {
		return "?"
	}
	var s string
	if json.Unmarshal(probe.ID, &s) != nil {
		s = string(probe.ID) // a number, say
	}
	if len(s) > 40 {
		s = s[:40]
	}
	return s
}

// isDM: a message without a guild is a direct message.
func (m message) isDM() bool { return m.GuildID == "" }
