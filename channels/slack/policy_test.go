package slack

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

const bot = "UBOT"

func slackCfg(mod func(*Config)) Config {
	c := defaults()
	if mod != nil {
		mod(&c)
	}
	return c
}

func TestPolicyDecide(t *testing.T) {
	mention := event{Type: "app_mention", User: "U1", Channel: "C1", TS: "1.1", Text: "<@UBOT> hi"}
	plain := event{Type: "message", ChannelType: "channel", User: "U1", Channel: "C1", TS: "1.2", Text: "hi all"}
	msgMention := event{Type: "message", ChannelType: "channel", User: "U1", Channel: "C1", TS: "1.1", Text: "<@UBOT> hi"}
	dm := event{Type: "message", ChannelType: "im", User: "U1", Channel: "D1", TS: "1.3", Text: "hello"}
	dmNoType := event{Type: "message", User: "U1", Channel: "D9", TS: "1.3", Text: "hello"}
	withSub := func(e event, sub string) event { e.Subtype = sub; return e }
	withUser := func(e event, u string) event { e.User = u; return e }
	withText := func(e event, s string) event { e.Text = s; return e }

	open := slackCfg(func(c *Config) { c.GroupPolicy = "open" })
	allow := slackCfg(func(c *Config) { c.GroupPolicy = "allowlist"; c.GroupAllowFrom = []string{"C1"} })
	allowMention := slackCfg(func(c *Config) {
		c.GroupPolicy, c.GroupAllowFrom, c.GroupRequireMention = "allowlist", []string{"C1"}, true
	})
	noDM := slackCfg(func(c *Config) { c.DM.Enabled = false })
	const (
		skipChannel     = "chat not in channels.slack.groupAllowFrom"
		skipNoMention   = "not addressed to the bot (channels.slack.groupPolicy mention)"
		skipNotRequired = "not addressed to the bot (channels.slack.groupRequireMention)"
	)

	cases := []struct {
		name string
		cfg  Config
		ev   event
		want string
	}{
		{"mention answered by default", slackCfg(nil), mention, ""},
		{"plain channel message ignored by default (mention policy)", slackCfg(nil), plain, skipNoMention},
		{"message copy of a mention left to app_mention", slackCfg(nil), msgMention, skipMentionDup},
		{"open answers plain channel messages", open, plain, ""},
		{"open still leaves the message copy of a mention", open, msgMention, skipMentionDup},
		{"allowlist answers listed channel", allow, plain, ""},
		{"allowlist ignores other channels", allow, func() event { e := plain; e.Channel = "C2"; return e }(), skipChannel},
		{"allowlist with requireMention ignores plain", allowMention, plain, skipNotRequired},
		{"allowlist with requireMention answers mentions", allowMention, mention, ""},
		{"unknown policy answers nothing", slackCfg(func(c *Config) { c.GroupPolicy = "everyone" }), mention, `unknown channels.slack.groupPolicy "everyone"`},
		{"DM answered", slackCfg(nil), dm, ""},
		{"DM recognised by its D channel", slackCfg(nil), dmNoType, ""},
		{"DM mentioning the bot still answered (no app_mention in DMs)", slackCfg(nil), withText(dm, "<@UBOT> hi"), ""},
		{"DMs disabled", noDM, dm, "direct messages are off (channels.slack.dm.enabled)"},
		{"file share is a user message", slackCfg(nil), withSub(dm, "file_share"), ""},
		{"edits ignored", slackCfg(nil), withSub(dm, "message_changed"), skipSubtype},
		{"bot messages ignored", slackCfg(nil), withSub(plain, "bot_message"), skipSubtype},
		{"own messages ignored", slackCfg(nil), withUser(dm, bot), skipOwn},
		{"no sender", slackCfg(nil), withUser(dm, ""), skipIncomplete},
		{"other event types", slackCfg(nil), event{Type: "reaction_added", User: "U1", Channel: "C1"}, skipNotMessage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, policy{cfg: c.cfg}.decide(c.ev, bot))
		})
	}

	// Before auth.test has told the bot who it is, its own replies (which
	// carry a bot_id) must not be answered: that could loop forever.
	own := dm
	own.User, own.BotID = bot, "B1"
	assert.Equal(t, skipUnknownBot, policy{cfg: slackCfg(nil)}.decide(own, ""))
	assert.Equal(t, skipOwn, policy{cfg: slackCfg(nil)}.decide(own, bot))
	assert.Equal(t, "", policy{cfg: slackCfg(nil)}.decide(dm, ""), "a person's DM is still answered")
	for _, ts := range []string{"", "1", "1.", ".1", "a.b", "1.2.3", "-1.2"} {
		assert.Equal(t, skipIncomplete, policy{cfg: slackCfg(nil)}.decide(func() event { e := dm; e.TS = ts; return e }(), bot), "ts %q", ts)
	}
}

func TestPolicyAllowFrom(t *testing.T) {
	allows := func(mod func(*Config), sender string) bool {
		cfg := config.Default()
		setBlock(t, cfg, slackCfg(mod))
		return channels.AllowFromFor(cfg, Name).Allows(sender)
	}
	only := func(c *Config) { c.AllowFrom = []string{"U1"} }
	assert.True(t, allows(only, "U1"))
	assert.False(t, allows(only, "U2"))
	assert.False(t, allows(nil, "U1"), "no allowFrom: pairing only")
	assert.True(t, allows(func(c *Config) { c.AllowFrom = []string{"*"} }, "anyone"))
	dmList := func(c *Config) { c.DM.Policy, c.DM.AllowFrom = "allowlist", []string{"U7"} }
	assert.True(t, allows(dmList, "U7"), "dm.allowFrom lets its senders in")
	assert.False(t, allows(dmList, "U8"))
	assert.False(t, allows(func(c *Config) { c.DM.AllowFrom = []string{"U7"} }, "U7"), "dm.allowFrom counts only with policy allowlist")
}

func TestPolicyThreads(t *testing.T) {
	p := policy{cfg: slackCfg(nil)}
	top := event{Type: "app_mention", Channel: "C1", TS: "100.1"}
	inThread := event{Type: "app_mention", Channel: "C1", TS: "100.5", ThreadTS: "100.1"}
	dm := event{Type: "message", ChannelType: "im", Channel: "D1", TS: "200.1"}
	dmThread := event{Type: "message", ChannelType: "im", Channel: "D1", TS: "200.5", ThreadTS: "200.1"}

	assert.Equal(t, "100.1", p.threadOf(top), "top-level mention: a new thread under it")
	assert.Equal(t, "100.1", p.threadOf(inThread), "in a thread: that thread")
	assert.Equal(t, "", p.threadOf(dm), "top-level DM: no thread")
	assert.Equal(t, "200.1", p.threadOf(dmThread), "a thread in a DM is honoured")

	flat := policy{cfg: slackCfg(func(c *Config) { c.ReplyInThread = false })}
	assert.Equal(t, "", flat.threadOf(top), "replyInThread false: no thread")
}

func TestCleanText(t *testing.T) {
	assert.Equal(t, "what is 2 < 3 & 4 > 1?", cleanText("<@UBOT> what is 2 &lt; 3 &amp; 4 &gt; 1?", bot))
	assert.Equal(t, "hi <@U2>", cleanText("hi <@UBOT> <@U2>", bot))
	assert.Equal(t, "", cleanText("<@UBOT>", bot))
	assert.Equal(t, "<@UBOT> hi", cleanText("<@UBOT> hi", ""), "bot unknown: nothing stripped")
}

func TestMessageIDRoundTrip(t *testing.T) {
	ch, ts, ok := parseMessageID(messageID("C1", "1700000000.000100"))
	assert.True(t, ok)
	assert.Equal(t, "C1", ch)
	assert.Equal(t, "1700000000.000100", ts)
	_, _, ok = parseMessageID("cli-123")
	assert.False(t, ok)
	assert.Equal(t, int64(1700000000), tsTime("1700000000.000100").Unix())
	assert.Equal(t, 100000, tsTime("1700000000.000100").Nanosecond())
}
