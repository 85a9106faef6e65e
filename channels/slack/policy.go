package slack

import "strings"

// event is the part of a Slack message or app_mention event the channel reads.
type event struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	User        string `json:"user"`
	BotID       string `json:"bot_id"`
	Text        string `json:"text"`
	TS          string `json:"ts"`
	ThreadTS    string `json:"thread_ts"`
	Channel     string `json:"channel"`
	ChannelType string `json:"channel_type"`
	ClientMsgID string `json:"client_msg_id"`
	Files       []file `json:"files"`
}

// file is a file shared with a message.
type file struct {
	ID                 string `json:"id"`
	Name               string `json:"name"`
	Title              string `json:"title"`
	Mimetype           string `json:"mimetype"`
	Size               int64  `json:"size"`
	URLPrivate         string `json:"url_private"`
	URLPrivateDownload string `json:"url_private_download"`
}

// isDM tells a direct message from one in a channel, a private channel
// or a group DM. app_mention events carry no channel_type: they only
// happen in channels.
func (e event) isDM() bool {
	if e.ChannelType != "" {
		return e.ChannelType == "im"
	}
	return e.Type == "message" && strings.HasPrefix(e.Channel, "D")
}

// validTS reports whether ts is a Slack message timestamp ("1700000000.000100"):
// replies, reactions and de-duplication all need one.
func validTS(ts string) bool {
	sec, frac, ok := strings.Cut(ts, ".")
	return ok && sec != "" && frac != "" && strings.Trim(sec+frac, "0123456789") == ""
}

func mentionOf(botID string) string { return "<@" + botID + ">" }

// mentions tells whether the event addresses the bot.
func (e event) mentions(botID string) bool {
	return e.Type == "app_mention" || (botID != "" && strings.Contains(e.Text, mentionOf(botID)))
}

// policy holds nanobot's rules for which Slack messages the bot answers.
type policy struct {
	cfg Config
}

// Decisions about an event; "" means take it in.
const (
	skipNotMessage = "not a message"
	skipSubtype    = "edited, deleted or bot message"
	skipOwn        = "the bot's own message"
	skipIncomplete = "no sender, channel or ts"
	skipUnknownBot = "a bot's message while the bot's own user ID is unknown (auth.test failed)"
	skipMentionDup = "a mention: taken from its app_mention event"
)

// decide applies nanobot's rules: user messages only (file shares
// included), never the bot's own; in channels the groupPolicy; DMs unless
// dm.enabled is false. Who may talk at all (allowFrom, pairing) is the
// manager's check, after this one.
func (p policy) decide(e event, botID string) string {
	switch {
	case e.Type != "message" && e.Type != "app_mention":
		return skipNotMessage
	case e.Subtype != "" && e.Subtype != "file_share":
		return skipSubtype
	case e.User == "" || e.Channel == "" || !validTS(e.TS):
		return skipIncomplete
	case botID != "" && e.User == botID:
		return skipOwn
	case botID == "" && e.BotID != "":
		return skipUnknownBot // it may be our own reply: answering it could loop
	}
	if e.isDM() {
		return p.cfg.DM.Skip(Name)
	}
	// Slack sends a mention in a channel twice, as message and as app_mention.
	if e.Type == "message" && botID != "" && strings.Contains(e.Text, mentionOf(botID)) {
		return skipMentionDup
	}
	return p.cfg.groupGate().Skip(e.Channel, func() bool { return e.mentions(botID) })
}

// threadOf is the thread a message lives in, as nanobot has it: its own
// thread, or with replyInThread the new thread under a top-level channel
// message; "" for a top-level DM (or a channel without replyInThread).
// The reply goes there, and the thread is the message's session scope.
func (p policy) threadOf(e event) string {
	if e.ThreadTS != "" {
		return e.ThreadTS
	}
	if p.cfg.ReplyInThread && !e.isDM() {
		return e.TS
	}
	return ""
}
